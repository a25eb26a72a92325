package payment

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrCanceled means the PaymentIntent was canceled at the provider (by the
// completer): nothing was charged under it, and nothing ever will be. A
// confirm that reaches the provider after the cancel (one a stalled process
// sent, or one the network delivers late) gets it.
var ErrCanceled = errors.New("payment intent canceled at the provider: nothing was or will be charged")

// DeclinedError means the provider refused the card. It is a definite
// outcome: no money moved, and retrying the confirm with the same key
// replays it.
type DeclinedError struct {
	IntentID string // the PaymentIntent, left requires_payment_method
	ChargeID string // the declined charge
	Message  string // the provider's explanation, fit to show the shopper
	// Code is the issuer's reason as Stripe names it (decline_code:
	// insufficient_funds, generic_decline, …), when the provider gave one.
	Code string
}

func (e *DeclinedError) Error() string {
	return fmt.Sprintf("card declined (payment intent %s): %s", e.IntentID, e.Message)
}

// Reason says why the provider was unavailable.
type Reason int

// The reasons, from which a caller picks its own status: 504, 503, 502.
const (
	// ReasonTimeout: no answer in time (the per-call timeout or the caller's
	// deadline), or the caller cancelled. The charge may have happened.
	ReasonTimeout Reason = iota + 1
	// ReasonUnreachable: no connection could be made, so the request was never
	// sent and nothing was charged.
	ReasonUnreachable
	// ReasonFailed: the provider answered 5xx or something unreadable, or the
	// connection broke after the request was sent. The charge may have
	// happened.
	ReasonFailed
)

func (r Reason) String() string {
	switch r {
	case ReasonTimeout:
		return "timeout"
	case ReasonUnreachable:
		return "unreachable"
	case ReasonFailed:
		return "failed"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// UnavailableError means the call did not produce a usable answer. Except for
// ReasonUnreachable the outcome is unknown: ask again with the same
// idempotency key, or settle the intent by its id.
type UnavailableError struct {
	Reason Reason
	Status int   // the provider's HTTP status, or 0 if it did not answer
	Err    error // the cause; may be nil
}

func (e *UnavailableError) Error() string {
	msg := "payment provider " + e.Reason.String()
	if e.Status != 0 {
		msg += fmt.Sprintf(" (status %d)", e.Status)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// ProviderError is an answer the provider should never have had to give:
// a 4xx other than a decline, such as a rejected parameter, an idempotency
// key reused with other parameters, or a wrong secret. It points at a bug or
// a misconfiguration on our side.
type ProviderError struct {
	Status  int
	Type    string // the provider's error type, e.g. idempotency_error
	Code    string // its code, e.g. payment_intent_unexpected_state
	Message string
	// ShouldRetry is the provider's Stripe-Should-Retry header: "true",
	// "false", or "" when it gave none.
	ShouldRetry string
	// canceled is set when the refusal carries a canceled intent.
	canceled bool
}

// Transient reports whether the refusal passes by itself, so that the same
// request, sent again later with the same idempotency key, may succeed: the
// provider is limiting our rate (429), the key is in use by a concurrent
// request of ours (409), or it refused our credentials, which an operator
// rotating the secret puts right (401). Any other 4xx answers the request
// itself and will answer it the same way again.
//
// The provider's own word, Stripe-Should-Retry, comes first: Stripe sends
// it with a 409 for a key in use by a concurrent request.
func (e *ProviderError) Transient() bool {
	switch e.ShouldRetry {
	case "true":
		return true
	case "false":
		return false
	}
	switch e.Status {
	case http.StatusUnauthorized, http.StatusConflict, http.StatusTooManyRequests:
		return true
	}
	return false
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("payment provider refused the request (status %d, %s): %s", e.Status, e.Type, e.Message)
}
