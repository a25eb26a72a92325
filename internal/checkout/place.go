package checkout

import (
	"context"
	"errors"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/payment"
)

// Place runs one attempt of an order through claim, charge and finish.
//
// It returns a Result for every outcome that is stored and replayed (a placed
// order, a declined card), and an error for every outcome that is not:
// *InvalidOrderError, ErrKeyReused, *InProgressError, ErrLockLost,
// *ProviderError, or an unexpected failure. None of those errors stores
// anything, so the same key can be retried.
func (e *Engine) Place(ctx context.Context, a Attempt) (Result, error) {
	// Validate and price before claiming: a bad request must not consume
	// the key, so the client can fix it and resend with the same key.
	priced, err := e.catalog.Price(ctx, a.Order.Items)
	var invalid *catalog.InvalidCartError
	if errors.As(err, &invalid) {
		return Result{}, &InvalidOrderError{Reason: invalid.Reason}
	}
	if err != nil {
		return Result{}, err
	}

	c, replay, err := e.claimKey(ctx, a)
	if err != nil {
		return Result{}, err
	}
	if replay != nil {
		return *replay, nil
	}
	claimed := Claimed{CustomerID: a.CustomerID, Key: a.Key, TakenOver: c.takenOver}
	if h := e.cfg.Hooks.AfterClaim; h != nil {
		h(ctx, claimed)
	}

	// This attempt owns the key now. If the client hangs up, finishing is
	// still better than leaving a charge without its order, so the rest is
	// detached from the request's cancellation; the provider client and
	// FinishTimeout bound it instead.
	ctx = context.WithoutCancel(ctx)

	ch, err := e.charge(ctx, a, priced)
	var declined *payment.DeclinedError
	if err != nil && !errors.As(err, &declined) {
		return Result{}, err
	}
	if h := e.cfg.Hooks.BeforeFinish; h != nil {
		h(ctx, claimed)
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.FinishTimeout)
	defer cancel()
	if declined != nil {
		return e.finishDeclined(ctx, a, c, declined)
	}
	return e.finishOrder(ctx, a, c, priced, ch)
}
