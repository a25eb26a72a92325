package database

import (
	"context"
	"fmt"
	"time"
)

// Replication is the database's place in a replicated setup, for the
// readiness report: a standby (in recovery) refuses every write, as a
// primary does for a moment after a failover demotes it.
type Replication struct {
	InRecovery bool
	// Standbys is how many standbys stream from this server.
	Standbys int
}

// ReplicationState reads whether the server is a standby and how many
// standbys stream from it. pg_stat_replication shows its rows (not all
// their columns) to any role, so the count needs no privilege.
func (d *DB) ReplicationState(ctx context.Context) (Replication, error) {
	var r Replication
	err := d.Pool.QueryRow(ctx,
		`SELECT pg_is_in_recovery(), (SELECT count(*) FROM pg_stat_replication)::int`).Scan(&r.InRecovery, &r.Standbys)
	if err != nil {
		return Replication{}, fmt.Errorf("replication state: %w", err)
	}
	return r, nil
}

// OldestWaitingJob is how long the oldest job that could run now has been
// waiting for a worker (zero when none waits): jobs that wait long mean no
// worker is taking them, in this process or in `web worker`.
func (d *DB) OldestWaitingJob(ctx context.Context) (time.Duration, error) {
	var seconds float64
	err := d.Pool.QueryRow(ctx, `SELECT coalesce(extract(epoch FROM now() - min(scheduled_at)), 0)::float8
		FROM river_job WHERE state = 'available' AND scheduled_at <= now()`).Scan(&seconds)
	if err != nil {
		return 0, fmt.Errorf("oldest waiting job: %w", err)
	}
	return time.Duration(seconds * float64(time.Second)), nil
}
