package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/bench/chaos/chaosdb"
)

// lockKeysOnce is one row lock disruption of the drive, recorded in t.
func (cl *cluster) lockKeysOnce(ctx context.Context, t *tally, logf func(string, ...any)) {
	var began time.Time
	err := cl.lockKeys(ctx, cl.cfg.RowLockKeys, cl.cfg.RowLock, func(keys, started int) {
		began = time.Now()
		logf("row locks of %d keys (%d started) held for %s", keys, started, cl.cfg.RowLock)
		t.count(func(d *Disruptions) {
			d.RowLocks++
			d.KeysLocked += keys
			d.StartedKeysLocked += started
		})
	})
	switch {
	case errors.Is(err, errDriveOver):
		logf("no row lock: %v", err)
	case err != nil:
		t.fail("lock keys", err)
	default:
		t.span(windowRowLock, began)
		logf("row locks released")
	}
}

// lockKeys takes the row locks of the n newest order keys, started ones
// first, in a transaction on a connection of the harness's own, holds them
// for hold and rolls back: a session that stalled holding rows (a
// migration, a stuck batch job, an operator's forgotten psql) while the
// server answers everything else. A finish, lease renewal or takeover of
// those keys waits for the lock until its own deadline. locked is told
// what was locked, once it is. The error is for locks that could not be
// taken.
//
// The locks are taken while PostgreSQL is neither stalled nor crashed:
// otherwise the transaction would wait out the stall and the hold would
// begin late. A crash during the hold ends the locks early (the connection
// is gone), which is no error, as what the shops met is then the crash.
func (cl *cluster) lockKeys(ctx context.Context, n int, hold time.Duration, locked func(keys, started int)) error {
	tx, keys, err := cl.takeLocks(ctx, n)
	if err != nil {
		return err
	}
	// Not ctx: the locks go when the hold is over, even if the drive ended.
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a crash may have ended it
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

// takeLocks begins the transaction and locks the keys, between the
// disruptions of the whole server.
func (cl *cluster) takeLocks(ctx context.Context, n int) (pgx.Tx, []chaosdb.ChaosLockNewestKeysRow, error) {
	cl.pgMu.Lock()
	defer cl.pgMu.Unlock()
	if ctx.Err() != nil {
		return nil, nil, errDriveOver
	}
	tx, err := cl.db.Pool.Begin(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("begin: %w", err)
	}
	keys, err := chaosdb.New(tx).ChaosLockNewestKeys(ctx, int32(n))
	if err != nil {
		tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // the error says what went wrong
		return nil, nil, err
	}
	return tx, keys, nil
}
