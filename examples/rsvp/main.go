// Command rsvp is the idem kit's Echo v5 example: a page to RSVP to a party,
// and the same RSVP as a JSON API. Each RSVP is written once, in the
// transaction that stores its answer: once per form however often it is
// submitted (a double click, a reload of the POST, a resubmit after Back),
// and once per Idempotency-Key however often a client sends it (a retry
// after a timeout gets the first answer again, marked Idempotent-Replayed:
// true; the same key with another body is refused, 422).
//
// Run it with a PostgreSQL database and a secret of 32 bytes or more, the
// same on every instance, that signs the forms' keys:
//
//	createdb rsvp
//	DATABASE_URL=postgres:///rsvp FORM_SECRET=$(openssl rand -hex 32) go run .
//	curl -i localhost:8080/api/rsvps -H 'Authorization: Bearer alice' -H 'Idempotency-Key: "r-1"' \
//		-H 'Content-Type: application/json' -d '{"name": "Ada", "guests": 3}'
package main

//go:generate go tool templ generate

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v5"

	"exactlyonce/idem"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	if err := run(ctx, addr, os.Getenv("DATABASE_URL"), []byte(os.Getenv("FORM_SECRET"))); err != nil {
		slog.Error("rsvp", "err", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, with the kit's maintenance beside the server.
func run(ctx context.Context, addr, databaseURL string, secret []byte) error {
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	if err := migrate(ctx, pool); err != nil {
		return err
	}
	keys := idem.NewStore(pool, idem.Options{})
	e, err := newServer(pool, keys, secret)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// Releases the key of a request that died before it finished (its RSVP,
	// written in the transaction that finishes the key, was rolled back
	// with it), and deletes answers older than a day.
	wg.Go(func() { idem.Maintain(ctx, idem.Maintenance{Store: keys}) })

	// Serves until ctx ends, then lets what is in flight finish (10s).
	return echo.StartConfig{Address: addr, HideBanner: true}.Start(ctx, e)
}

// schema is the app's own table; the kit's (idem_keys) comes from its
// migrations.
const schema = `CREATE TABLE IF NOT EXISTS rsvps (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
	guests     integer NOT NULL CHECK (guests BETWEEN 1 AND 10),
	replied_at timestamptz NOT NULL DEFAULT now()
)`

// migrate applies the app's schema, then the kit's migrations (whose
// errors say "idem: migrate …"). An app that runs goose applies
// idem.Migrations with it instead.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, schema); err != nil {
		return fmt.Errorf("migrate rsvps: %w", err)
	}
	return idem.Migrate(ctx, pool)
}
