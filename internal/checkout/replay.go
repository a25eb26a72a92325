package checkout

import (
	"context"
	"errors"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
)

// claimUnpriced answers an attempt whose order cannot be priced today (the
// product left the catalog, or the catalog cannot be read). A key already
// claimed for this very request (same fingerprint) must not depend on the
// catalog: a finished one replays what it stored, and a started one, which
// may have charged already, is answered as any claim would be (409 while
// its lock is held, a takeover that resumes with the stored request once it
// expired). Only when no such key exists is priceErr the answer: then
// nothing was claimed, so nothing was charged.
func (e *Engine) claimUnpriced(ctx context.Context, a Attempt, priceErr error) (claim, *Result, error) {
	kc, err := e.keys.Resume(ctx, e.keyRequest(a, nil))
	err = database.Translate(err)
	if errors.Is(err, idem.ErrNotFound) {
		return claim{}, nil, priceError(priceErr)
	}
	c, replay, err := e.claimed(ctx, a, kc, err)
	switch {
	case errors.Is(err, ErrKeyReused):
		return claim{}, nil, priceError(priceErr)
	case err != nil || replay != nil:
		return claim{}, replay, err
	case c.resumed == nil:
		// A key claimed before requests were stored with their keys: it
		// cannot be resumed without pricing it, so it is left to the
		// completer (in practice such keys are past the provider's window).
		return claim{}, nil, &InProgressError{RetryAfter: e.lockFor(a)}
	}
	return c, nil, nil
}

// priceError is the answer to an order that cannot be priced.
func priceError(err error) error {
	var invalid *catalog.InvalidCartError
	if errors.As(err, &invalid) {
		return &InvalidOrderError{Reason: invalid.Reason}
	}
	return err
}
