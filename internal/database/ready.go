package database

import (
	"context"
	"errors"
	"fmt"
)

// ErrMigrationsPending means the schema is older than the binary's
// migrations: this instance must not take traffic yet.
var ErrMigrationsPending = errors.New("migrations pending")

// Ready reports whether the database answers and has every embedded
// migration applied, for a readiness probe. It does not take goose's
// migration lock, so an instance migrating elsewhere never blocks the probe.
func (d *DB) Ready(ctx context.Context) error {
	if err := d.Pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	providers, err := newMigrators(d.Pool)
	if err != nil {
		return err
	}
	for _, provider := range providers {
		// Closing the provider closes only its database/sql wrapper, whose
		// connections go back to the pool.
		defer provider.Close()
		pending, err := provider.HasPending(ctx)
		if err != nil {
			return fmt.Errorf("migration status: %w", err)
		}
		if pending {
			return ErrMigrationsPending
		}
	}
	return nil
}
