package idem

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem/internal/idemdb"
)

// Work is the caller's operation under a key: it writes in tx and returns
// the response to store and send. The key is finished in the same
// transaction, so the write and the answer land together.
type Work func(ctx context.Context, tx pgx.Tx) (Response, error)

// Outcome is what Do came to: the response to send, and whether it was
// stored by an earlier request with the key rather than made by this call.
type Outcome struct {
	Response
	// Replayed is true when the response is another request's stored
	// answer (a retry after it finished, or a double submit that waited
	// for it): only then is it sent with Idempotent-Replayed: true.
	Replayed bool
}

// Do runs work at most once per key and returns its response, or the stored
// response of the attempt that ran it:
//
//   - a new (or taken over) key runs work under a kept lease and finishes
//     in work's transaction; if work fails, nothing was written and the key
//     is released, so a retry runs it again. The work goes on if ctx is
//     cancelled (the client went away), within one lease;
//   - a key another attempt holds is awaited for up to wait; if that
//     attempt fails and releases the key meanwhile (its work refused the
//     request, or its client went away before it wrote), this call claims
//     the key afresh and runs work itself, so it gets the same refusal or
//     its own answer, never an error of the other request's;
//   - a key still held when wait runs out fails with ErrInProgress, and a
//     key used with another fingerprint with ErrMismatch.
func (s *Store) Do(ctx context.Context, r Request, wait time.Duration, work Work) (Outcome, error) {
	c, err := s.ClaimOrAwait(ctx, r, wait)
	if err != nil {
		return Outcome{}, err
	}
	if c.Replay != nil {
		return Outcome{Response: *c.Replay, Replayed: true}, nil
	}
	resp, err := c.Lock.Do(ctx, work)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Response: resp}, nil
}

// Do runs work under this lock, the way Store.Do does for a key it claimed:
// under the kept lease, in a transaction that finishes the key with work's
// response, so that work's writes and the stored answer land together or
// not at all. When work fails, nothing was written and the key is released
// for a retry; when the lease was lost, ErrLockLost. The work goes on if ctx
// is cancelled (the client went away), within one lease: a browser drops the
// first request of a double click for the second, which is waiting for the
// first's answer. It is the JSON route's write (idemhttp.Handle) and the
// form's.
func (l *Lock) Do(ctx context.Context, work Work) (Response, error) {
	bounded, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.lease)
	defer cancel()
	if d, ok := ctx.Deadline(); ok {
		var cancelAt context.CancelFunc
		bounded, cancelAt = context.WithDeadline(bounded, d)
		defer cancelAt()
	}
	held, stop := l.Keep(WithLock(bounded, l))
	defer stop()
	var resp Response
	finishRan := false
	err := l.store.inTx(held, "idempotent work", func(tx pgx.Tx) error {
		var err error
		if resp, err = work(held, tx); err != nil {
			return err
		}
		if err := l.finish(held, idemdb.New(tx), resp); err != nil {
			return err
		}
		finishRan = true
		return nil
	})
	if err != nil {
		if cause := context.Cause(held); errors.Is(cause, ErrLockLost) || errors.Is(cause, ErrLeaseLapsing) {
			// Fenced: another attempt has the key, or may have it soon.
			err = ErrLockLost
		}
		if finishRan && !errors.Is(err, ErrLockLost) && !IsUnavailable(err) {
			// Every statement went through and COMMIT refused them (a
			// deferred constraint, a serialization failure): nothing was
			// stored. An outage at COMMIT is not this: whether it
			// committed is not known, and ErrUnavailable says so.
			err = fmt.Errorf("%w: %w", ErrNotCommitted, err)
		}
		if !errors.Is(err, ErrLockLost) {
			// Rolled back: nothing was written, so the key may be retried.
			_ = l.Release(context.WithoutCancel(ctx))
		}
		return Response{}, fmt.Errorf("idempotent work: %w", err)
	}
	l.finished = true // committed
	return resp, nil
}

// ClaimOrAwait claims the key, and when another attempt holds it waits up
// to wait for that attempt's answer (a Claim with Replay). A key its holder
// released while this call waited is claimed again, so the caller runs the
// operation itself rather than fail because another request did. After
// wait it fails with ErrInProgress. Do and Middleware are built on it.
//
// The claim itself is not cut short when the client goes away (a browser
// drops the first request of a double click for the second): a claim
// cancelled in flight may still have inserted the key, which would then sit
// started, with nobody at work under it, until its lease ran out. It is
// bounded by the lease instead.
func (s *Store) ClaimOrAwait(ctx context.Context, r Request, wait time.Duration) (Claim, error) {
	waitCtx, cancel := context.WithTimeout(ctx, max(wait, 0))
	defer cancel()
	claimCtx, cancelClaim := context.WithTimeout(context.WithoutCancel(ctx), s.leaseOf(r))
	defer cancelClaim()
	for {
		c, err := s.Claim(claimCtx, r)
		if !errors.Is(err, ErrInProgress) || waitCtx.Err() != nil {
			return c, err
		}
		resp, err := s.Await(waitCtx, r.Scope, r.Key)
		switch {
		case errors.Is(err, ErrNotFound):
			continue // released by its holder: claim it afresh
		case err != nil:
			return Claim{}, err
		}
		return Claim{Replay: &resp}, nil
	}
}
