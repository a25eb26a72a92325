package checkout

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/logging"
)

// minRenewEvery keeps a tiny lock timeout from turning the heartbeat into a
// busy loop.
const minRenewEvery = 10 * time.Millisecond

// withLease runs call, the provider call, while keeping the key's lock: every
// third of the lock timeout it extends locked_until, but only while the key
// still carries this attempt's token. A lock shorter than a slow provider
// call would otherwise let a retry take over a live attempt.
//
// When a renewal finds the token gone, a newer attempt owns the operation:
// call's context is cancelled and withLease returns ErrLockLost. The renewal
// goroutine never outlives withLease, so nothing renews a lock after the
// call has ended.
func (e *Engine) withLease(ctx context.Context, customerID uuid.UUID, key string, c claim, lockFor time.Duration, who Claimed, call func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		e.renew(ctx, db.RenewLockParams{LockFor: lockFor, CustomerID: customerID, Key: key, LockToken: c.token}, who, done, cancel)
	})
	err := call(ctx)
	close(done)
	wg.Wait()
	if errors.Is(context.Cause(ctx), ErrLockLost) {
		return ErrLockLost
	}
	return err
}

// renew is the heartbeat loop of withLease. It returns when done is closed,
// when ctx ends, or after cancelling ctx because the lock was lost.
func (e *Engine) renew(ctx context.Context, p db.RenewLockParams, who Claimed, done <-chan struct{}, cancel context.CancelCauseFunc) {
	t := time.NewTicker(max(p.LockFor/3, minRenewEvery))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if h := e.cfg.Hooks.BeforeRenew; h != nil {
			h(ctx, who)
		}
		_, err := e.db.RenewLock(ctx, p)
		switch {
		case errors.Is(err, database.ErrNotFound):
			e.metrics.LeaseRenewals.WithLabelValues("lost").Inc()
			e.log.WarnContext(ctx, "lock lost to a newer attempt during the provider call; stopping",
				logging.Key(p.Key), "customer_id", p.CustomerID, "completer", who.ByCompleter)
			cancel(ErrLockLost)
			return
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			// A failed renewal is not a lost lock: keep the call going and
			// try again. If renewals keep failing the lock expires, a retry
			// may take over, and this attempt's finish then writes nothing.
			e.metrics.LeaseRenewals.WithLabelValues("error").Inc()
			e.log.WarnContext(ctx, "renew lock", logging.Key(p.Key), "err", err)
		default:
			e.metrics.LeaseRenewals.WithLabelValues("renewed").Inc()
		}
	}
}
