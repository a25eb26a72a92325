package database

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"exactlyonce/migrations"
)

// Migrate applies every embedded migration the database has not seen yet.
// goose takes a session-level advisory lock, so several instances starting at
// once apply each migration exactly once.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	provider, err := newMigrator(pool)
	if err != nil {
		return err
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Pending reports how many embedded migrations the database still lacks;
// readiness checks use it to refuse traffic on an old schema.
func Pending(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	provider, err := newMigrator(pool)
	if err != nil {
		return 0, err
	}
	statuses, err := provider.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("migration status: %w", err)
	}
	pending := 0
	for _, s := range statuses {
		if s.State == goose.StatePending {
			pending++
		}
	}
	return pending, nil
}

func newMigrator(pool *pgxpool.Pool) (*goose.Provider, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, stdlib.OpenDBFromPool(pool), migrations.FS,
		goose.WithSessionLocker(locker))
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return provider, nil
}
