package checkout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/payment"
)

// charge is phase 2: the external call. Its error is a *OutcomeUnknownError when
// the outcome is unknown, a *payment.DeclinedError when it is a definite no,
// and payment.ErrCanceled when the completer canceled the operation at the
// provider before this call reached it (a definite "no charge" too).
func (e *Engine) charge(ctx context.Context, a Attempt, c claim, priced catalog.Priced) (payment.Charge, error) {
	began := time.Now()
	ch, err := e.payments.Charge(ctx, payment.ChargeRequest{
		IdempotencyKey: c.providerKey,
		Amount:         priced.Amount,
		Currency:       priced.Currency,
		Card:           a.Order.Card,
		Description:    fmt.Sprintf("order for customer %s", a.CustomerID),
	})
	e.metrics.ObserveProvider("charge", providerResult(ctx, ch, err), began)
	var (
		unavailable *payment.UnavailableError
		refused     *payment.ProviderError
	)
	switch {
	case errors.As(err, &unavailable):
		// The key stays started and locked: a retry before the lock expires
		// is told to wait, one after it takes over and asks the provider
		// again with the same derived key.
		return payment.Charge{}, &OutcomeUnknownError{Reason: unavailable.Reason, RetryAfter: a.LockFor, Err: err}
	case errors.As(err, &refused):
		// A 4xx other than a decline is our bug or misconfiguration, and
		// not always proof that nothing was charged: an idempotency_error
		// means the derived key already has a charge. So it is handled as
		// an unknown outcome, never as a 500: the key stays started, a
		// retry resumes it, and otherwise the completer asks the provider
		// what happened and settles the key.
		return payment.Charge{}, &OutcomeUnknownError{Reason: payment.ReasonFailed, RetryAfter: a.LockFor, Err: err}
	}
	return ch, err
}

// The defaults of Config.ProviderRetries and ProviderBackoff: two more
// calls, 0.2 and 0.4 s apart at most, turn a blip of the provider into a
// slower answer rather than a 502.
const (
	defaultProviderRetries = 2
	defaultProviderBackoff = 200 * time.Millisecond
)

// chargeRetried is phase 2 as an attempt runs it: charge, asked again with
// the same derived key after an answer that was lost or a refusal that
// passes (see worthRetrying), up to Config.ProviderRetries times, while the
// lease is kept. A timeout is not asked again here: it has cost a whole
// provider timeout already, and the key is handed back for the client's
// retry instead (see chargeAndFinish).
func (e *Engine) chargeRetried(ctx context.Context, a Attempt, c claim, priced catalog.Priced) (payment.Charge, error) {
	wait := e.cfg.ProviderBackoff
	for retry := 0; ; retry++ {
		ch, err := e.charge(ctx, a, c, priced)
		if retry >= e.cfg.ProviderRetries || !worthRetrying(err) {
			return ch, err
		}
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return ch, err
		case <-t.C:
		}
		wait *= 2
	}
}

// worthRetrying reports whether a charge error may go away if the same call
// is made again at once: the provider's answer was lost or never came (a
// 5xx, a broken connection, no connection at all), or the provider refused
// for a reason that passes (payment.ProviderError.Transient). A declined
// card, a canceled operation and a timeout are not.
func worthRetrying(err error) bool {
	var (
		unknown     *OutcomeUnknownError
		refused     *payment.ProviderError
		unavailable *payment.UnavailableError
	)
	switch {
	case !errors.As(err, &unknown):
		return false
	case errors.As(err, &refused):
		return refused.Transient()
	case errors.As(err, &unavailable):
		return unavailable.Reason != payment.ReasonTimeout
	}
	return false
}

// providerResult is the result label of a provider call's metric.
func providerResult(ctx context.Context, ch payment.Charge, err error) string {
	var (
		declined    *payment.DeclinedError
		unavailable *payment.UnavailableError
	)
	switch {
	case err == nil && ch.Status == payment.StatusDeclined:
		return "declined"
	case err == nil:
		return "succeeded"
	case ctx.Err() != nil:
		// Our side stopped the call: a lost lease or a shutdown, not the
		// provider's doing.
		return "cancelled"
	case errors.As(err, &declined):
		return "declined"
	case errors.Is(err, payment.ErrNoCharge), errors.Is(err, payment.ErrCanceled):
		return "no_charge"
	case errors.As(err, &unavailable):
		return "unavailable"
	}
	return "error"
}
