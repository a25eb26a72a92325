package idem

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Work is the caller's operation under a key: it writes in tx and returns
// the response to store and send. The key is finished in the same
// transaction, so the write and the answer land together.
type Work func(ctx context.Context, tx pgx.Tx) (Response, error)

// Do runs work at most once per key and returns its response, or the stored
// response of the attempt that ran it:
//
//   - a new (or taken over) key runs work under a kept lease and finishes
//     in work's transaction; if work fails, nothing was written and the key
//     is released, so a retry runs it again;
//   - a key another attempt holds is awaited for up to wait, then
//     ErrInProgress;
//   - a key used with another fingerprint fails with ErrMismatch.
func (s *Store) Do(ctx context.Context, r Request, wait time.Duration, work Work) (Response, error) {
	c, err := s.Claim(ctx, r)
	if errors.Is(err, ErrInProgress) {
		waitCtx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		return s.Await(waitCtx, r.Scope, r.Key)
	}
	if err != nil {
		return Response{}, err
	}
	if c.Replay != nil {
		return *c.Replay, nil
	}
	lock := c.Lock
	held, stop := lock.Keep(ctx)
	defer stop()
	var resp Response
	err = pgx.BeginFunc(held, s.pool, func(tx pgx.Tx) error {
		var err error
		if resp, err = work(held, tx); err != nil {
			return err
		}
		return lock.FinishTx(held, tx, resp)
	})
	if err != nil {
		if cause := context.Cause(held); errors.Is(cause, ErrLockLost) || errors.Is(cause, ErrLeaseLapsing) {
			// Fenced: another attempt has the key, or may have it soon.
			err = ErrLockLost
		}
		if !errors.Is(err, ErrLockLost) {
			// Rolled back: nothing was written, so the key may be retried.
			_ = lock.Release(context.WithoutCancel(ctx))
		}
		return Response{}, fmt.Errorf("idempotent work: %w", err)
	}
	return resp, nil
}
