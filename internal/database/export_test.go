package database

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// MigrateAppTo moves the application's schema (not the kit's) up or down
// to version, for tests of a migration's data.
func MigrateAppTo(ctx context.Context, pool *pgxpool.Pool, version int64) error {
	providers, err := newMigrators(pool)
	if err != nil {
		return err
	}
	app := providers[1]
	current, err := app.GetDBVersion(ctx)
	if err != nil {
		return err
	}
	if version < current {
		_, err = app.DownTo(ctx, version)
	} else {
		_, err = app.UpTo(ctx, version)
	}
	return err
}
