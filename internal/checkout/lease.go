package checkout

import (
	"context"
	"errors"
	"time"

	"exactlyonce/idem"
	"exactlyonce/internal/logging"
)

// FenceAt is how long after its lock was last taken or renewed an attempt
// stops its own provider call if no renewal has succeeded since: the kit's
// fence (idem.FenceAt), three quarters of the lock timeout. config checks
// that a normal provider call (PROVIDER_TIMEOUT) fits in that time.
func FenceAt(lockFor time.Duration) time.Duration { return idem.FenceAt(lockFor) }

// withLease runs call, the provider call, under the kit's lease keeper
// (idem.Lock.KeepWith, the kit's heartbeat with hooks): every
// third of the lock timeout it extends the lease, but only while the key
// still carries this attempt's token. A lock shorter than a slow provider
// call would otherwise let a retry take over a live attempt. What is about
// orders here is only the hooks, the metrics and the log lines.
//
// When a renewal finds the token gone, a newer attempt owns the operation:
// call's context is cancelled and withLease returns ErrLockLost. When
// renewals fail (the database is slow or unreachable, or the heartbeat
// itself is stalled), the keeper's fence cancels the call FenceAt after the
// lock was last known to be taken, and withLease returns ErrLeaseLapsing. A
// call that has already reached the provider may still be processed there;
// what makes that harmless is that the completer cancels at the provider
// before concluding "no charge".
func (e *Engine) withLease(ctx context.Context, c claim, who Claimed, call func(ctx context.Context) error) error {
	hooks := idem.LeaseHooks{
		Renewed: func(ctx context.Context, err error) {
			switch {
			case errors.Is(err, ErrLockLost):
				e.metrics.LeaseRenewals.WithLabelValues("lost").Inc()
				e.log.WarnContext(ctx, "lock lost to a newer attempt during the provider call; stopping",
					logging.Key(who.Key), "customer_id", who.CustomerID, "completer", who.ByCompleter)
			case err != nil:
				e.metrics.LeaseRenewals.WithLabelValues("error").Inc()
				e.log.WarnContext(ctx, "renew lock", logging.Key(who.Key), "err", err)
			default:
				e.metrics.LeaseRenewals.WithLabelValues("renewed").Inc()
			}
		},
	}
	if h := e.cfg.Hooks.BeforeRenew; h != nil {
		hooks.BeforeRenew = func(ctx context.Context) { h(ctx, who) }
	}
	if h := e.cfg.Hooks.BeforeFence; h != nil {
		hooks.BeforeFence = func(ctx context.Context) { h(ctx, who) }
	}
	held, stop := c.lock.KeepWith(ctx, hooks)
	err := call(held)
	switch cause := stop(); {
	case errors.Is(cause, ErrLockLost):
		return ErrLockLost
	case errors.Is(cause, ErrLeaseLapsing) && err != nil:
		// (A call that returned an answer before the fence fired keeps it:
		// the lock is still this attempt's, so it may finish.)
		e.metrics.LeaseRenewals.WithLabelValues("fenced").Inc()
		e.log.WarnContext(ctx, "lock could not be renewed; provider call stopped before the lock ran out",
			logging.Key(who.Key), "customer_id", who.CustomerID, "completer", who.ByCompleter)
		return ErrLeaseLapsing
	}
	return err
}
