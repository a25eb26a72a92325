// Command web serves the shop: the browser checkout, the JSON API and the
// fake payment provider, on one address. It only wires parts together; see
// package app for what is wired.
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

	"exactlyonce/internal/app"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/config"
	"exactlyonce/internal/database"
	"exactlyonce/internal/localpg"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "web:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	log := newLogger(cfg.LogFormat)

	pool, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer pool.Close()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	a := app.New(pool, app.Config{
		BaseURL:         "http://" + ln.Addr().String(),
		LockTimeout:     cfg.LockTimeout,
		ProviderTimeout: cfg.ProviderTimeout,
		Demo:            cfg.Demo,
		Log:             log,
	})
	srv := &http.Server{Handler: a.Echo, ReadHeaderTimeout: 10 * time.Second}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("serving", "url", "http://"+ln.Addr().String(), "demo", cfg.Demo, "lock_timeout", cfg.LockTimeout)

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "deadline", cfg.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// openDatabase connects to DATABASE_URL, or starts the project-local server
// `make run` uses, then migrates and seeds the catalog.
func openDatabase(ctx context.Context, cfg config.Config, log *slog.Logger) (*pgxpool.Pool, error) {
	url := cfg.DatabaseURL
	if url == "" {
		dir, fellBack, err := localpg.UsableDataDir(cfg.LocalDB)
		if err != nil {
			return nil, err
		}
		if fellBack {
			log.Info("the postgres user cannot reach the preferred data folder; using another", "preferred", cfg.LocalDB, "dir", dir)
		}
		srv, err := localpg.Start(ctx, localpg.Options{DataDir: dir})
		if err != nil {
			return nil, err
		}
		log.Info("local PostgreSQL ready", "dir", dir)
		url = srv.URL("postgres")
	}
	pool, err := database.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := database.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	if err := catalog.Seed(ctx, database.New(pool).Queries); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

func newLogger(format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}
