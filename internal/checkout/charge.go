package checkout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/tracing"
)

// pay is phase 2, the provider calls, the Stripe way in two calls with the
// intent's id stored in between:
//
//  1. create the PaymentIntent (amount, currency, description, metadata:
//     all derived from the key row) under the operation's provider key,
//     unless the key's row holds its id already (a takeover);
//  2. store its id in the key's row, fenced by this attempt's lock token
//     and its lease (StoreIntent): an attempt that was taken over, or
//     whose lease ran out while it was stalled, stores nothing and stops
//     here, so an intent whose id was never stored was never confirmed
//     and can never charge, and no confirm is sent outside a lease;
//  3. confirm it with the card's PaymentMethod, under a provider key of its
//     own (ConfirmKey): every attempt of the operation confirms with the
//     same key, so a retry of a confirm that happened replays it;
//  4. judge what the confirm left (settleConfirmed): only a succeeded
//     intent is returned.
//
// Its error is a *OutcomeUnknownError when the outcome is unknown (also an
// intent still processing), a *payment.DeclinedError when it is a definite
// no, payment.ErrCanceled when the intent was canceled before this confirm
// reached it or was left in a status that is no charge and canceled now
// (*notChargedError) — a definite "no charge" too — and ErrLockLost when a
// newer attempt owns the key.
func (e *Engine) pay(ctx context.Context, a Attempt, c *claim, priced catalog.Priced) (payment.Intent, error) {
	if c.intentID == "" {
		in, err := e.createIntent(ctx, e.payments, a, c, priced)
		if err != nil {
			return payment.Intent{}, unknownOutcome(a, err)
		}
		if h := e.cfg.Hooks.BeforeStore; h != nil {
			h(ctx, Claimed{CustomerID: a.CustomerID, Key: a.Key, TakenOver: c.lock.TakenOver})
		}
		if err := e.storeIntent(ctx, a, c, in.ID); err != nil {
			return payment.Intent{}, err
		}
		c.intentID = in.ID
	}
	if h := e.cfg.Hooks.BeforeConfirm; h != nil {
		h(ctx, Claimed{CustomerID: a.CustomerID, Key: a.Key, TakenOver: c.lock.TakenOver})
	}
	pm, ok := payment.PaymentMethod(a.Order.Card)
	if !ok {
		// Place refuses such a card before claiming; a resumed key carries
		// the card of the retry that resumed it, checked the same way.
		return payment.Intent{}, fmt.Errorf("card is not a test card")
	}
	in, err := e.callProvider(ctx, "confirm", func(ctx context.Context) (payment.Intent, error) {
		return e.payments.ConfirmIntent(ctx, c.intentID, ConfirmKey(c.providerKey), pm, a.ReturnURL)
	})
	if err != nil {
		return payment.Intent{}, unknownOutcome(a, err)
	}
	return e.settleConfirmed(ctx, a, c, in)
}

// settleConfirmed judges the intent a confirm answered without an error.
// Stripe answers 200 for more than a charge: requires_action (the bank asks
// the shopper to authenticate, 3-D Secure) and processing (the money is on
// its way, and may still not come) charged nothing yet. Only succeeded is
// returned as it is; the caller still checks its amount and currency
// against the order's.
//
//   - requires_action, for an attempt that gave a return URL, while the
//     key has waited for the shopper less than the AuthenticationWindow:
//     the intent is
//     retrieved as it is now (the confirm's answer may be a replay of the
//     first, while the shopper has been to their bank since): succeeded is
//     the charge, a failed authentication the decline, and one still
//     waiting for the shopper an *authenticationError with the bank's page,
//     which the caller sends them to (awaitAuthentication). Without a
//     return URL there is no page: it is canceled, below.
//
//   - processing: the confirm's answer may be a replay of the first one, so
//     the intent is retrieved as it is now; one still processing is an
//     unknown outcome, the key handed back: the client's retry, or the
//     completer, asks again until it succeeds or fails. It is not canceled:
//     Stripe cancels a processing intent only in rare cases, and a refused
//     cancel stored under the cancel key would be replayed to the
//     completer's cancel of the same key after the intent has failed.
//
//   - declined (requires_payment_method with its error) is the decline.
//
//   - canceled is payment.ErrCanceled, as when the confirm is refused;
//     unless the completer canceled it for a reason the answer must give,
//     as the completer's own finish does: the decline it had, or an
//     authentication awaited and abandoned.
//
//   - any other status (requires_action, above all) is canceled at the
//     provider under the completer's cancel key, so that nothing can charge
//     it any more, and is a *notChargedError; unless the cancel finds it
//     succeeded (or processing) meanwhile, which is judged as above.
func (e *Engine) settleConfirmed(ctx context.Context, a Attempt, c *claim, in payment.Intent) (payment.Intent, error) {
	if in.Status == payment.StatusProcessing || in.Status == payment.StatusRequiresAction && a.ReturnURL != "" {
		now, err := e.callProvider(ctx, "retrieve", func(ctx context.Context) (payment.Intent, error) {
			return e.payments.RetrieveIntent(ctx, in.ID)
		})
		if err != nil {
			return payment.Intent{}, unknownOutcome(a, err)
		}
		in = now
	}
	switch {
	case in.Status == payment.StatusSucceeded:
		return in, nil
	case in.Status == payment.StatusProcessing:
		return payment.Intent{}, stillProcessing(a, in)
	case in.Status == payment.StatusCanceled && in.Declined != "":
		// Canceled by the completer after its confirm was declined (the
		// card holder failed at the bank, and the webhook said so), the
		// completer's finish then lost to this attempt: the decline, as
		// the completer would have stored it (settle).
		return payment.Intent{}, &payment.DeclinedError{IntentID: in.ID, Message: in.Declined, Code: in.DeclineCode}
	case in.Status == payment.StatusCanceled && c.awaited:
		// Canceled by the completer while the card holder was at the bank
		// (past the window): the abandoned authentication, with its
		// intent, as the completer would have stored it.
		return payment.Intent{}, &notChargedError{IntentID: in.ID, Status: payment.StatusRequiresAction, awaited: true}
	case in.Status == payment.StatusCanceled:
		return payment.Intent{}, payment.ErrCanceled
	case in.Declined != "" && in.Status == payment.StatusRequiresPaymentMethod:
		return payment.Intent{}, &payment.DeclinedError{IntentID: in.ID, Message: in.Declined}
	case in.Status == payment.StatusRequiresAction && a.ReturnURL != "" && in.AuthenticateURL != "" &&
		!(c.awaited && c.awaiting >= e.cfg.AuthenticationWindow):
		// Past the window the wait is over: canceled, below, as the
		// completer cancels an abandoned one.
		return payment.Intent{}, &authenticationError{IntentID: in.ID, URL: in.AuthenticateURL}
	}
	left := in.Status
	in, err := e.callProvider(ctx, "cancel", func(ctx context.Context) (payment.Intent, error) {
		return e.payments.CancelIntent(ctx, in.ID, cancelKey(c.providerKey))
	})
	switch {
	case err != nil:
		return payment.Intent{}, unknownOutcome(a, err)
	case in.Status == payment.StatusSucceeded:
		return in, nil
	case in.Status == payment.StatusCanceled:
		return payment.Intent{}, &notChargedError{IntentID: in.ID, Status: left, awaited: c.awaited}
	}
	return payment.Intent{}, stillProcessing(a, in)
}

// authenticationError is a confirm the shopper's bank must authenticate
// first (3-D Secure): nothing is charged until the shopper has been to URL,
// the bank's page, and back.
type authenticationError struct{ IntentID, URL string }

func (e *authenticationError) Error() string {
	return "payment intent " + e.IntentID + " waits for the shopper to authenticate it with their bank"
}

// stillProcessing is the unknown outcome of an intent that is processing:
// it will succeed or fail, and the key waits for it, started.
func stillProcessing(a Attempt, in payment.Intent) error {
	return &OutcomeUnknownError{Reason: payment.ReasonFailed, RetryAfter: a.LockFor,
		Err: fmt.Errorf("payment intent %s: %w", in.ID, errProcessing)}
}

// notChargedError is a confirm that left the intent in a status that is no
// charge (Status, requires_action above all), which the attempt then
// canceled at the provider: nothing was charged, and nothing will be. It is
// payment.ErrCanceled, with the status for the answer's detail.
type notChargedError struct {
	IntentID, Status string
	// awaited: the shopper was sent to their bank for it, and did not
	// authenticate it within the AuthenticationWindow.
	awaited bool
}

func (e *notChargedError) Error() string {
	return "payment intent " + e.Status + " after its confirm, canceled: " + payment.ErrCanceled.Error()
}
func (e *notChargedError) Unwrap() error { return payment.ErrCanceled }

// sameMoney reports whether the succeeded intent in charged what the order
// costs: its amount and currency. Only then is it the order's charge.
func sameMoney(in payment.Intent, priced catalog.Priced) bool {
	return in.Amount == priced.Amount && in.Currency == priced.Currency
}

// createIntent sends the create of the operation's PaymentIntent. The
// completer sends the very same request to learn the id of an intent whose
// answer was lost (settleUnstored), so its parameters come from the key
// row alone.
func (e *Engine) createIntent(ctx context.Context, payments Payments, a Attempt, c *claim, priced catalog.Priced) (payment.Intent, error) {
	return e.callProvider(ctx, "create", func(ctx context.Context) (payment.Intent, error) {
		return payments.CreateIntent(ctx, intentRequest(a, c, priced))
	})
}

// intentRequest is the create of the operation's PaymentIntent.
func intentRequest(a Attempt, c *claim, priced catalog.Priced) payment.IntentRequest {
	return payment.IntentRequest{
		IdempotencyKey: c.providerKey,
		Amount:         priced.Amount,
		Currency:       priced.Currency,
		Description:    fmt.Sprintf("order for customer %s", a.CustomerID),
		Metadata: payment.Metadata{
			CustomerID: a.CustomerID.String(), Key: a.Key, OperationID: c.operation.String(),
		},
	}
}

// storeIntent is StoreIntent: the intent's id into the key's row, only
// while this attempt holds the key and its lease has not run out. No row
// means a newer attempt took the key over, or may now (the lease ran out
// while this attempt was stalled): this one must not confirm.
func (e *Engine) storeIntent(ctx context.Context, a Attempt, c *claim, id string) (err error) {
	ctx, span := e.tracer.Start(ctx, spanStoreIntent, trace.WithAttributes(attrIntent.String(id)))
	defer func() { tracing.End(span, err) }()
	_, err = e.db.StoreIntent(ctx, db.StoreIntentParams{
		PaymentIntentID: id, CustomerID: a.CustomerID, Key: a.Key, LockToken: c.token(),
	})
	switch {
	case errors.Is(err, database.ErrNotFound):
		return ErrLockLost
	case err != nil:
		return fmt.Errorf("store payment intent: %w", err)
	}
	return nil
}

// ConfirmKey is the idempotency key of the confirm of the operation whose
// provider key is providerKey: one per operation, so that a retry of a
// confirm that happened (its answer lost) replays it.
func ConfirmKey(providerKey string) string { return providerKey + "/confirm" }

// cancelKey is the idempotency key of the completer's cancel.
func cancelKey(providerKey string) string { return providerKey + "/cancel" }

// unknownOutcome sorts a provider error: an unavailable provider, or a 4xx
// other than a decline, is an unknown outcome (the key stays started, and a
// retry or the completer settles it); a decline and a cancel are definite.
func unknownOutcome(a Attempt, err error) error {
	var (
		unavailable *payment.UnavailableError
		refused     *payment.ProviderError
	)
	switch {
	case errors.As(err, &unavailable):
		// The key stays started and locked: a retry before the lock expires
		// is told to wait, one after it takes over and asks the provider
		// again with the same derived keys.
		return &OutcomeUnknownError{Reason: unavailable.Reason, RetryAfter: a.LockFor, Err: err}
	case errors.As(err, &refused):
		// A 4xx other than a decline is our bug or misconfiguration, and
		// not always proof that nothing was charged: an idempotency_error
		// means the derived key was used for other parameters. So it is
		// handled as an unknown outcome, never as a 500: the key stays
		// started, a retry resumes it, and otherwise the completer settles
		// the intent by its id.
		return &OutcomeUnknownError{Reason: payment.ReasonFailed, RetryAfter: a.LockFor, Err: err}
	}
	return err
}

// The defaults of Config.ProviderRetries and ProviderBackoff: two more
// calls, 0.2 and 0.4 s apart at most, turn a blip of the provider into a
// slower answer rather than a 502.
const (
	defaultProviderRetries = 2
	defaultProviderBackoff = 200 * time.Millisecond
)

// payRetried is phase 2 as an attempt runs it: pay, asked again with the
// same derived keys after an answer that was lost or a refusal that passes
// (see worthRetrying), up to Config.ProviderRetries times, while the lease
// is kept. A create that succeeded is not sent again: its id is stored, and
// the retry confirms. A timeout is not asked again here: it has cost a
// whole provider timeout already, and the key is handed back for the
// client's retry instead (see chargeAndFinish). These are the only retries
// of a provider call: the SDK's own are off (payment.NetworkRetries).
func (e *Engine) payRetried(ctx context.Context, a Attempt, c *claim, priced catalog.Priced) (payment.Intent, error) {
	wait := e.cfg.ProviderBackoff
	for retry := 0; ; retry++ {
		in, err := e.pay(ctx, a, c, priced)
		if retry >= e.cfg.ProviderRetries || !worthRetrying(err) {
			return in, err
		}
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return in, err
		case <-t.C:
		}
		wait *= 2
	}
}

// worthRetrying reports whether a provider error may go away if the same
// call is made again at once: the provider's answer was lost or never came
// (a 5xx, a broken connection, no connection at all), or the provider
// refused for a reason that passes (payment.ProviderError.Transient, which
// honours Stripe-Should-Retry). A declined card, a canceled intent and a
// timeout are not.
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

// callProvider runs one call to the provider as a span, provider.<call>,
// and times it in the provider metric, whose exemplar is the trace.
func (e *Engine) callProvider(ctx context.Context, call string, f func(ctx context.Context) (payment.Intent, error)) (payment.Intent, error) {
	ctx, span := e.tracer.Start(ctx, "provider."+call)
	began := time.Now()
	in, err := f(ctx)
	result := providerResult(ctx, in, err)
	e.metrics.ObserveProvider(ctx, call, result, began)
	span.SetAttributes(attrResult.String(result))
	if in.ID != "" {
		span.SetAttributes(attrIntent.String(in.ID))
	}
	tracing.End(span, err)
	return in, err
}

// providerResult is the result label of a provider call's metric.
func providerResult(ctx context.Context, in payment.Intent, err error) string {
	var (
		declined    *payment.DeclinedError
		unavailable *payment.UnavailableError
	)
	switch {
	case err == nil && in.Status == payment.StatusSucceeded:
		return "succeeded"
	case err == nil && in.Status == payment.StatusCanceled:
		return "no_charge"
	case err == nil:
		return "created"
	case ctx.Err() != nil:
		// Our side stopped the call: a lost lease or a shutdown, not the
		// provider's doing.
		return "cancelled"
	case errors.As(err, &declined):
		return "declined"
	case errors.Is(err, payment.ErrCanceled):
		return "no_charge"
	case errors.As(err, &unavailable):
		return "unavailable"
	}
	return "error"
}
