package database

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	goosedb "github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"

	"exactlyonce/idem"
	"exactlyonce/migrations"
)

// Migrate applies every embedded migration the database has not seen yet:
// the idempotency kit's first (its own numbering, in its own version table
// idem_db_version), then the application's. goose takes a session-level
// advisory lock, so several instances starting at once apply each
// migration exactly once.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	providers, err := newMigrators(pool)
	if err != nil {
		return err
	}
	for _, provider := range providers {
		if _, err := provider.Up(ctx); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	return nil
}

// Pending reports how many embedded migrations the database still lacks;
// readiness checks use it to refuse traffic on an old schema.
func Pending(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	providers, err := newMigrators(pool)
	if err != nil {
		return 0, err
	}
	pending := 0
	for _, provider := range providers {
		statuses, err := provider.Status(ctx)
		if err != nil {
			return 0, fmt.Errorf("migration status: %w", err)
		}
		for _, s := range statuses {
			if s.State == goose.StatePending {
				pending++
			}
		}
	}
	return pending, nil
}

// newMigrators returns the kit's migrator and the application's, in the
// order they apply.
func newMigrators(pool *pgxpool.Pool) ([]*goose.Provider, error) {
	kitStore, err := goosedb.NewStore(goosedb.DialectPostgres, idem.MigrationsTable)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	kit, err := newMigrator(pool, "", idem.Migrations, goose.WithStore(kitStore))
	if err != nil {
		return nil, err
	}
	app, err := newMigrator(pool, goose.DialectPostgres, migrations.FS)
	if err != nil {
		return nil, err
	}
	return []*goose.Provider{kit, app}, nil
}

func newMigrator(pool *pgxpool.Pool, dialect goose.Dialect, fsys fs.FS, opts ...goose.ProviderOption) (*goose.Provider, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	provider, err := goose.NewProvider(dialect, stdlib.OpenDBFromPool(pool), fsys,
		append(opts, goose.WithSessionLocker(locker))...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return provider, nil
}
