package checkout

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

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
	c, replay, err := e.lockAndClaim(ctx, a, uuid.New(), time.Now())
	switch {
	case errors.Is(err, database.ErrNotFound), errors.Is(err, ErrKeyReused):
		var invalid *catalog.InvalidCartError
		if errors.As(priceErr, &invalid) {
			return claim{}, nil, &InvalidOrderError{Reason: invalid.Reason}
		}
		return claim{}, nil, priceErr
	case err != nil || replay != nil:
		return claim{}, replay, err
	case c.resumed == nil:
		// A key claimed before requests were stored with their keys: it
		// cannot be resumed without pricing it, so it is left to the
		// completer (in practice such keys are past canTakeOver's window).
		return claim{}, nil, &InProgressError{RetryAfter: e.lockFor(a)}
	}
	return c, nil, nil
}
