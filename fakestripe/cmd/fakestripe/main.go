// Command fakestripe serves the fake Stripe as a process of its own, on a
// database of its own, reached only over HTTP as Stripe is: Stripe's API
// under /v1 for the shops (STRIPE_API_BASE), signed webhooks to
// STRIPE_WEBHOOK_URL, and its fault controls under /provider/demo/ (the
// lab, the chaos harness and the load test set faults through them).
//
// Configuration is the environment, as the shop's is:
//
//	FAKE_PROVIDER_STORE    where it keeps its state: postgres (the default) or
//	                       memory, for load tests only: no database, lost on
//	                       restart (see fakestripe.NewInMemory)
//	DATABASE_URL           its own database, with postgres; it applies its own
//	                       migrations
//	PROVIDER_ADDR          where it listens (127.0.0.1:8081; :0 for any free port)
//	STRIPE_SECRET_KEY      the secret key the shops send (required)
//	STRIPE_WEBHOOK_URL     where it sends its events (none when empty)
//	STRIPE_WEBHOOK_SECRET  what it signs them with
//	READY_FILE             when set, the file it writes its base URL to once
//	                       it listens, for launchers that gave it port 0
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"exactlyonce/fakestripe"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "fakestripe:", err)
		os.Exit(1)
	}
}

// shutdownGrace is how long the calls in flight may take to finish once
// the process is told to stop: the shops' provider timeout is 10 s.
const shutdownGrace = 10 * time.Second

func run(ctx context.Context) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	kind := os.Getenv("FAKE_PROVIDER_STORE")
	switch kind {
	case "":
		kind = "postgres"
	case "postgres", "memory":
	default:
		return fmt.Errorf("FAKE_PROVIDER_STORE is %q: it must be postgres (the default) or memory", kind)
	}
	secret := os.Getenv("STRIPE_SECRET_KEY")
	if secret == "" {
		return errors.New("STRIPE_SECRET_KEY is not set: the fake and the shops that call it need the same key")
	}
	opts := []fakestripe.Option{fakestripe.WithLogger(log)}
	if hook := os.Getenv("STRIPE_WEBHOOK_URL"); hook != "" {
		opts = append(opts, fakestripe.WithWebhooks(hook, os.Getenv("STRIPE_WEBHOOK_SECRET")))
	}
	var p *fakestripe.Provider
	switch kind {
	case "postgres":
		url := os.Getenv("DATABASE_URL")
		if url == "" {
			return errors.New("DATABASE_URL is not set: the fake keeps its charges in a database of its own")
		}
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			return fmt.Errorf("open the database: %w", err)
		}
		defer pool.Close()
		if err := fakestripe.Migrate(ctx, pool); err != nil {
			return err
		}
		p = fakestripe.New(pool, secret, opts...)
	case "memory":
		// For load tests only: what it holds is gone when it stops.
		log.Warn("the fake keeps its state in memory: it is lost when the process ends")
		p = fakestripe.NewInMemory(secret, opts...)
	}
	defer p.Close()

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	p.Mount(e)

	addr := os.Getenv("PROVIDER_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8081"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	base := "http://" + ln.Addr().String()
	if f := os.Getenv("READY_FILE"); f != "" {
		// Whole, then renamed: whoever waits for the file never reads half a URL.
		if err := os.WriteFile(f+".tmp", []byte(base+"\n"), 0o600); err != nil {
			return fmt.Errorf("write READY_FILE: %w", err)
		}
		if err := os.Rename(f+".tmp", f); err != nil {
			return fmt.Errorf("write READY_FILE: %w", err)
		}
	}
	log.Info("serving the fake Stripe", "url", base, "webhooks", os.Getenv("STRIPE_WEBHOOK_URL"), "store", kind)

	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}
