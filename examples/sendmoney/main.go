// Command sendmoney is the idem kit's form example: a page that sends money
// to a friend, once per form however often it is submitted. A double click,
// a reload of the POST, a resubmit after Back: each sends the key the form
// was rendered with, and the transfer is written once, in the transaction
// that stores its answer; every other submit gets that answer again.
//
// Run it with a PostgreSQL database and a secret of 32 bytes or more, the
// same on every instance, that signs the forms' keys:
//
//	createdb sendmoney
//	DATABASE_URL=postgres:///sendmoney FORM_SECRET=$(openssl rand -hex 32) go run .
package main

//go:generate go tool templ generate

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
	if err := run(ctx, addr, os.Getenv("DATABASE_URL"), []byte(os.Getenv("FORM_SECRET"))); err != nil {
		slog.Error("sendmoney", "err", err)
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
	s, err := newServer(pool, keys, secret)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// Releases the key of a submit that died before it finished (its
	// transfer, written in the transaction that finishes the key, was
	// rolled back with it), and deletes answers older than a day.
	wg.Go(func() { idem.Maintain(ctx, idem.Maintenance{Store: keys}) })

	hs := &http.Server{Addr: addr, Handler: s.routes(), ReadHeaderTimeout: 5 * time.Second}
	wg.Go(func() {
		<-ctx.Done()
		shutdown, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		hs.Shutdown(shutdown) //nolint:errcheck // what was in flight when it gave up is cut off
	})
	slog.Info("sendmoney listening", "url", "http://"+addr)
	if err := hs.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// schema is the app's own table; the kit's (idem_keys) comes from its
// migrations.
const schema = `CREATE TABLE IF NOT EXISTS transfers (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	sender  text NOT NULL,
	friend  text NOT NULL,
	amount  integer NOT NULL CHECK (amount BETWEEN 1 AND 1000),
	sent_at timestamptz NOT NULL DEFAULT now()
)`

// migrate applies the app's schema, then the kit's migrations (whose
// errors say "idem: migrate …"). An app that runs goose applies
// idem.Migrations with it instead.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, schema); err != nil {
		return fmt.Errorf("migrate transfers: %w", err)
	}
	return idem.Migrate(ctx, pool)
}
