package database

import (
	"context"
	"fmt"
	"time"
)

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
