// Command echojson is the idem kit's JSON example: POST /transfers, on Echo,
// makes a transfer once per Idempotency-Key, however often a client sends
// it. A retry after a timeout, or a duplicate racing the original, gets the
// first answer again, marked Idempotent-Replayed: true; the same key with
// another body is refused (422).
//
//	createdb echojson
//	DATABASE_URL=postgres:///echojson go run .
//	curl -i localhost:8080/transfers -H 'Authorization: Bearer alice' -H 'Idempotency-Key: "t-1"' \
//		-H 'Content-Type: application/json' -d '{"to": "bob", "amount": 20}'
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	if err := run(ctx, addr, os.Getenv("DATABASE_URL")); err != nil {
		slog.Error("echojson", "err", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, with the kit's maintenance beside the server.
func run(ctx context.Context, addr, databaseURL string) error {
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	if err := migrate(ctx, pool); err != nil {
		return err
	}
	keys := idem.NewStore(pool, idem.Options{})

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// Releases the key of a request that died before it finished (its
	// transfer, written in the transaction that finishes the key, was
	// rolled back with it), and deletes answers older than a day.
	wg.Go(func() { idem.Maintain(ctx, idem.Maintenance{Store: keys}) })

	hs := &http.Server{Addr: addr, Handler: newServer(pool, keys), ReadHeaderTimeout: 5 * time.Second}
	wg.Go(func() {
		<-ctx.Done()
		shutdown, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		hs.Shutdown(shutdown) //nolint:errcheck // what was in flight when it gave up is cut off
	})
	slog.Info("echojson listening", "url", "http://"+addr)
	if err := hs.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// schema is the app's own table; the kit's (idem_keys) comes from its
// migrations.
const schema = `CREATE TABLE IF NOT EXISTS transfers (
	id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	sender    text NOT NULL,
	recipient text NOT NULL,
	amount    integer NOT NULL CHECK (amount BETWEEN 1 AND 1000),
	sent_at   timestamptz NOT NULL DEFAULT now()
)`

// migrate applies the kit's migrations, then the app's schema. An app that
// runs goose applies idem.Migrations with it instead.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if err := idem.Migrate(ctx, pool); err != nil {
		return fmt.Errorf("migrate idem: %w", err)
	}
	if _, err := pool.Exec(ctx, schema); err != nil {
		return fmt.Errorf("migrate transfers: %w", err)
	}
	return nil
}
