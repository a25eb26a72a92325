package fakestripe

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	goosedb "github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// MigrationsTable is goose's version table of the fake's migrations, apart
// from the shop's and the kit's: the fake applies its own schema wherever it
// runs, on the shop's server (`make run`) or on one of its own.
const MigrationsTable = "fakestripe_db_version"

// Migrate applies the fake's migrations to the database of pool. goose
// takes a session-level advisory lock, so processes starting at once apply
// each migration once.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	p, err := migrations(pool)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("fakestripe migrate: %w", err)
	}
	return nil
}

// migrations is goose's provider of the fake's migrations on pool.
func migrations(pool *pgxpool.Pool) (*goose.Provider, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("fakestripe migrations: %w", err)
	}
	store, err := goosedb.NewStore(goosedb.DialectPostgres, MigrationsTable)
	if err != nil {
		return nil, fmt.Errorf("fakestripe migrations: %w", err)
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(fakeStripeLockID))
	if err != nil {
		return nil, fmt.Errorf("fakestripe migrations: %w", err)
	}
	p, err := goose.NewProvider("", stdlib.OpenDBFromPool(pool), sub, goose.WithStore(store), goose.WithSessionLocker(locker))
	if err != nil {
		return nil, fmt.Errorf("fakestripe migrations: %w", err)
	}
	return p, nil
}

// fakeStripeLockID is the advisory lock goose holds while it migrates the
// fake: not goose's default, which the shop's migrations take on the same
// server under `make run`.
const fakeStripeLockID = 0x66616b65 // "fake"
