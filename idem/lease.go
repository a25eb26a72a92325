package idem

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrLeaseLapsing means an attempt stopped its own work because it could not
// renew its lease in time: rather than let the lease run out while the work
// runs, and another attempt take over beside it, it fences itself off. The
// key stays started; whether the work's outside effects happened is unknown.
var ErrLeaseLapsing = errors.New("lease could not be renewed; work stopped before the lease ran out")

// FenceAt is how long after its lease was last taken or renewed an attempt
// stops its own work if no renewal has succeeded since: three quarters of
// the lease, leaving a quarter for the cancellation to take effect before
// the lease can run out.
func FenceAt(lease time.Duration) time.Duration { return lease - lease/4 }

// minRenewEvery keeps a tiny lease from turning the heartbeat into a busy
// loop.
const minRenewEvery = 10 * time.Millisecond

// leaseKeeping is what keepLease needs to keep one attempt's lease. Lock.Keep
// fills it for a key in the kit's table; a caller whose key lives in a table
// of its own fills it with its own renewal.
type leaseKeeping struct {
	// Lease is how long a claim or renewal holds the key.
	Lease time.Duration
	// Since is when, by this process's clock, the claim (or the last
	// renewal) was sent: the lease it got runs from no earlier than that,
	// so Since + Lease is a safe lower bound on its expiry. Zero means now.
	Since time.Time
	// Renew extends the lease from the database's now(), only while the key
	// still carries this attempt's token, and returns ErrLockLost when it
	// does not.
	Renew func(ctx context.Context) error
	// BeforeRenew and BeforeFence, when set, run before each renewal and
	// before the fence stops the work; tests block in them to stand for a
	// stalled process.
	BeforeRenew func(ctx context.Context)
	BeforeFence func(ctx context.Context)
	// Renewed, when set, is told how each renewal went: nil, ErrLockLost,
	// or the error of a renewal that failed (which is not a lost lock: the
	// keeper tries again, and the fence stops the work if none succeeds).
	Renewed func(ctx context.Context, err error)
}

// keepLease renews a lease every third of it while the attempt's work runs
// under held, and fences the attempt itself: held is cancelled with cause
// ErrLockLost as soon as a renewal finds the key taken over, and with cause
// ErrLeaseLapsing when no renewal has succeeded FenceAt after the last one
// was sent (a timer, so a renewal stuck in a slow database cannot delay it).
// stop ends the renewals, waits for them, and returns ErrLockLost,
// ErrLeaseLapsing or nil: what, if anything, ended held early. Nothing
// renews the lease after stop has returned.
func keepLease(ctx context.Context, k leaseKeeping) (held context.Context, stop func() error) {
	if k.Since.IsZero() {
		k.Since = time.Now()
	}
	held, cancel := context.WithCancelCause(ctx)
	fence := time.AfterFunc(time.Until(k.Since.Add(FenceAt(k.Lease))), func() {
		if k.BeforeFence != nil {
			k.BeforeFence(held)
		}
		cancel(ErrLeaseLapsing)
	})
	var wg sync.WaitGroup
	wg.Go(func() { k.renew(held, cancel, fence) })
	return held, func() error {
		// Ending the context stops the heartbeat with the work; a cause
		// set before, a lost lock or the fence, is kept.
		cancel(errWorkEnded)
		wg.Wait()
		fence.Stop()
		switch cause := context.Cause(held); {
		case errors.Is(cause, ErrLockLost):
			return ErrLockLost
		case errors.Is(cause, ErrLeaseLapsing):
			return ErrLeaseLapsing
		}
		return nil
	}
}

// errWorkEnded is the cause keepLease's stop ends held with.
var errWorkEnded = errors.New("work under the lease ended")

// renew is keepLease's heartbeat loop. It returns when ctx ends, or after
// cancelling it because the lock was lost. Every renewal that succeeds
// pushes the fence back.
func (k leaseKeeping) renew(ctx context.Context, cancel context.CancelCauseFunc, fence *time.Timer) {
	t := time.NewTicker(max(k.Lease/3, minRenewEvery))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if k.BeforeRenew != nil {
			k.BeforeRenew(ctx)
		}
		sent := time.Now()
		err := k.Renew(ctx)
		if err != nil && !errors.Is(err, ErrLockLost) && ctx.Err() != nil {
			return
		}
		if k.Renewed != nil {
			k.Renewed(ctx, err)
		}
		switch {
		case errors.Is(err, ErrLockLost):
			cancel(ErrLockLost)
			return
		case err == nil && ctx.Err() == nil:
			fence.Reset(time.Until(sent.Add(FenceAt(k.Lease))))
		}
	}
}
