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

// FenceAt is how long after its lock was last taken or renewed an attempt
// stops its own provider call if no renewal has succeeded since: three
// quarters of the lock timeout, leaving a quarter for the cancellation to
// take effect before the lock can run out. config checks that a normal
// provider call (PROVIDER_TIMEOUT) fits in that time.
func FenceAt(lockFor time.Duration) time.Duration { return lockFor - lockFor/4 }

// withLease runs call, the provider call, while keeping the key's lock: every
// third of the lock timeout it extends locked_until, but only while the key
// still carries this attempt's token. A lock shorter than a slow provider
// call would otherwise let a retry take over a live attempt.
//
// When a renewal finds the token gone, a newer attempt owns the operation:
// call's context is cancelled and withLease returns ErrLockLost. The renewal
// goroutine never outlives withLease, so nothing renews a lock after the
// call has ended.
//
// When renewals fail (the database is slow or unreachable, or the heartbeat
// itself is stalled), the attempt fences itself: a timer, reset by every
// renewal that succeeds, cancels the call FenceAt after the lock was last
// known to be taken, before the lock can expire, and withLease returns
// ErrLeaseLapsing. The timer counts from the moment the claim or renewal
// was sent, by the monotonic clock: the lock it got runs from later than
// that, so the fence always fires first. A call that has already reached the
// provider may still be processed there; what makes that harmless is that
// the completer cancels at the provider before concluding "no charge".
func (e *Engine) withLease(ctx context.Context, customerID uuid.UUID, key string, c claim, lockFor time.Duration, who Claimed, call func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fence := time.AfterFunc(time.Until(c.lockedAt.Add(FenceAt(lockFor))), func() {
		if h := e.cfg.Hooks.BeforeFence; h != nil {
			h(ctx, who)
		}
		cancel(ErrLeaseLapsing)
	})
	defer fence.Stop()
	var wg sync.WaitGroup
	wg.Go(func() {
		e.renew(ctx, db.RenewLockParams{LockFor: lockFor, CustomerID: customerID, Key: key, LockToken: c.token}, who, cancel, fence)
	})
	err := call(ctx)
	// Ending the context stops the heartbeat (and the fence) with the call;
	// a cause set before, a lost lock or the fence, is kept.
	cancel(errCallEnded)
	wg.Wait()
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrLockLost):
		return ErrLockLost
	case errors.Is(cause, ErrLeaseLapsing) && err != nil:
		// (A call that returned an answer before the fence fired keeps it:
		// the lock is still this attempt's, so it may finish.)
		e.metrics.LeaseRenewals.WithLabelValues("fenced").Inc()
		e.log.WarnContext(ctx, "lock could not be renewed; provider call stopped before the lock ran out",
			logging.Key(key), "customer_id", customerID, "completer", who.ByCompleter)
		return ErrLeaseLapsing
	}
	return err
}

// errCallEnded is the cause withLease ends its context with once the call
// has returned.
var errCallEnded = errors.New("provider call ended")

// renew is the heartbeat loop of withLease. It returns when ctx ends (the call
// is over), or after cancelling ctx because the lock was lost. Every renewal
// that succeeds pushes the fence back.
func (e *Engine) renew(ctx context.Context, p db.RenewLockParams, who Claimed, cancel context.CancelCauseFunc, fence *time.Timer) {
	t := time.NewTicker(max(p.LockFor/3, minRenewEvery))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if h := e.cfg.Hooks.BeforeRenew; h != nil {
			h(ctx, who)
		}
		sent := time.Now()
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
			// try again. If renewals keep failing, the fence stops the call
			// before the lock runs out.
			e.metrics.LeaseRenewals.WithLabelValues("error").Inc()
			e.log.WarnContext(ctx, "renew lock", logging.Key(p.Key), "err", err)
		default:
			e.metrics.LeaseRenewals.WithLabelValues("renewed").Inc()
			if ctx.Err() == nil {
				fence.Reset(time.Until(sent.Add(FenceAt(p.LockFor))))
			}
		}
	}
}
