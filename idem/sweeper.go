package idem

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem/internal/idemdb"
)

// SweepLockID is the advisory lock an Exclusive sweeper takes per batch.
const SweepLockID int64 = 7305812216405213249

// SweptKey is one answer a sweep deleted.
type SweptKey struct {
	Scope, Key string
	Status     int
	CreatedAt  time.Time
}

// Sweeper deletes answers of its Store's kind finished more than Keep ago, a bounded batch per
// transaction, so the table holds only the keys a client may still retry.
// Keep must outlive the longest a client retries (and the Forms' TTL). A
// started key is never deleted, however old: its outcome is not known yet.
type Sweeper struct {
	Store *Store
	Keep  time.Duration
	Batch int32 // default 1000
	// Exclusive lets one instance sweep at a time: each batch takes an
	// advisory lock (SweepLockID) for its transaction, and a pass that finds
	// it taken stops. Without it, instances sweep side by side, each
	// skipping the rows another is deleting.
	Exclusive bool
	// OnDelete, when set, runs in each batch's transaction with the keys the
	// batch deleted: an audit trail written with the deletion or not at all.
	OnDelete func(ctx context.Context, tx pgx.Tx, deleted []SweptKey) error
	// Yield, when set, makes the sweeper wait after each full batch for as
	// long as that batch took, times Yield: 1 leaves the database at least
	// half the time between batches. A backlog is then swept more slowly,
	// and the claims running meanwhile keep their latency.
	Yield float64
}

// SweepResult is what one pass did.
type SweepResult struct {
	Keys    int64
	Batches int
	// Busy means another instance holds the sweep lock, so the pass stopped.
	Busy bool
}

// Pass deletes old answers until a batch comes back short.
func (s *Sweeper) Pass(ctx context.Context) (SweepResult, error) {
	batch := s.Batch
	if batch <= 0 {
		batch = 1000
	}
	var res SweepResult
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		var n int
		began := time.Now()
		err := s.Store.inTx(ctx, "sweep keys", func(tx pgx.Tx) error {
			q := idemdb.New(tx)
			if s.Exclusive {
				locked, err := q.TrySweepLock(ctx, SweepLockID)
				if err != nil {
					return storeError("sweep lock", err)
				}
				if !locked {
					res.Busy = true
					return nil
				}
			}
			rows, err := q.Sweep(ctx, idemdb.SweepParams{Keep: s.Keep, Batch: batch, Kind: s.Store.kind})
			if err != nil {
				return storeError("sweep keys", err)
			}
			if n = len(rows); n == 0 || s.OnDelete == nil {
				return nil
			}
			deleted := make([]SweptKey, len(rows))
			for i, r := range rows {
				deleted[i] = SweptKey{Scope: r.Scope, Key: r.Key, CreatedAt: r.CreatedAt}
				if r.ResponseStatus != nil {
					deleted[i].Status = int(*r.ResponseStatus)
				}
			}
			return s.OnDelete(ctx, tx, deleted)
		})
		if err != nil {
			return res, err
		}
		if res.Busy {
			return res, nil
		}
		res.Batches++
		res.Keys += int64(n)
		if n < int(batch) {
			return res, nil
		}
		if s.Yield > 0 {
			t := time.NewTimer(time.Duration(s.Yield * float64(time.Since(began))))
			select {
			case <-ctx.Done():
				t.Stop()
				return res, ctx.Err()
			case <-t.C:
			}
		}
	}
}
