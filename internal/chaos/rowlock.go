package chaos

import (
	"context"
	"fmt"
	"time"

	"exactlyonce/internal/chaos/chaosdb"
)

// lockKeys takes the row locks of the n newest order keys, started ones
// first, in a transaction on a connection of the harness's own, holds them
// for hold and rolls back: a session that stalled holding rows (a
// migration, a stuck batch job, an operator's forgotten psql) while the
// server answers everything else. A finish, lease renewal or takeover of
// those keys waits for the lock until its own deadline. locked is told
// what was locked, once it is. The error is for locks that could not be
// taken.
//
// A crash during the hold ends the locks early (the connection is gone);
// that is no error, as what the shops met is then the crash.
func (cl *cluster) lockKeys(ctx context.Context, n int, hold time.Duration, locked func(keys, started int)) error {
	tx, err := cl.db.Pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	// Not ctx: the locks go when the hold is over, even if the drive ended.
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a crash may have ended it
	keys, err := chaosdb.New(tx).ChaosLockNewestKeys(ctx, int32(n))
	if err != nil {
		return err
	}
	started := 0
	for _, k := range keys {
		if k.Status == "started" {
			started++
		}
	}
	locked(len(keys), started)
	// Held even when the drive ends meanwhile, as a stall is: the waits
	// that end after the drive are the point.
	time.Sleep(hold)
	return nil
}
