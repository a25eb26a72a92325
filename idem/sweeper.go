package idem

import (
	"context"
	"fmt"
	"time"

	"exactlyonce/idem/internal/idemdb"
)

// Sweeper deletes answers finished more than Keep ago, in batches, so the
// table holds only the keys a client may still retry. Keep must outlive
// the longest a client retries (and the Forms' TTL).
type Sweeper struct {
	Store *Store
	Keep  time.Duration
	Batch int32 // default 1000
}

// Pass deletes old answers until none is left and reports how many.
func (s *Sweeper) Pass(ctx context.Context) (int64, error) {
	batch := s.Batch
	if batch <= 0 {
		batch = 1000
	}
	var total int64
	for {
		n, err := s.Store.q.Sweep(ctx, idemdb.SweepParams{Keep: s.Keep, Batch: batch})
		if err != nil {
			return total, fmt.Errorf("sweep keys: %w", err)
		}
		total += n
		if n < int64(batch) {
			return total, nil
		}
	}
}
