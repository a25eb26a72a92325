package payment

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// ErrNoCharge means the provider holds no charge for an idempotency key:
// the call that used it never reached the point of charging.
var ErrNoCharge = errors.New("no charge with that idempotency key")

// ErrCanceled means the operation under an idempotency key was canceled at
// the provider (see Client.Cancel): nothing was charged under the key, and
// nothing ever will be. Charge returns it for a call that arrived after the
// cancel; Cancel returns it when it found no charge and closed the key.
var ErrCanceled = errors.New("operation canceled at the provider: nothing was or will be charged")

// DeclinedError means the provider refused the card. It is a definite
// outcome: no money moved, and retrying with the same key replays it.
type DeclinedError struct {
	ChargeID string // the declined charge, recorded by the provider
	Message  string // the provider's explanation, fit to show the shopper
}

func (e *DeclinedError) Error() string {
	return fmt.Sprintf("card declined (charge %s): %s", e.ChargeID, e.Message)
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
// ReasonUnreachable the outcome is unknown: retry with the same idempotency
// key, or settle it with Cancel.
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
	Message string
}

// Transient reports whether the refusal passes by itself, so that the same
// request, sent again later with the same idempotency key, may succeed: the
// provider is limiting our rate (429), the key is in use by a concurrent
// request of ours (409), or it refused our credentials, which an operator
// rotating the secret puts right (401). Any other 4xx answers the request
// itself and will answer it the same way again.
func (e *ProviderError) Transient() bool {
	switch e.Status {
	case http.StatusUnauthorized, http.StatusConflict, http.StatusTooManyRequests:
		return true
	}
	return false
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("payment provider refused the request (status %d, %s): %s", e.Status, e.Type, e.Message)
}

// unavailable classifies a failure to get an answer.
func unavailable(ctx context.Context, err error) *UnavailableError {
	var opErr *net.OpError
	var netErr net.Error
	switch {
	// Checked first: a failed dial, even a timed-out one, means the request
	// never left, which is worth more to the caller than why.
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return &UnavailableError{Reason: ReasonUnreachable, Err: err}
	case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.As(err, &netErr) && netErr.Timeout():
		return &UnavailableError{Reason: ReasonTimeout, Err: err}
	default:
		return &UnavailableError{Reason: ReasonFailed, Err: err}
	}
}

// scrub removes the card number from messages the provider wrote, in case
// one ever echoes it: the number must not reach an error, and so a log.
func scrub(err error, card string) error {
	digits := strings.ReplaceAll(card, " ", "")
	if len(digits) < 6 { // too short to be a card, and to replace safely
		return err
	}
	clean := func(s string) string {
		s = strings.ReplaceAll(s, card, "[card]")
		return strings.ReplaceAll(s, digits, "[card]")
	}
	var de *DeclinedError
	var pe *ProviderError
	var ue *UnavailableError
	switch {
	case errors.As(err, &de):
		de.Message = clean(de.Message)
	case errors.As(err, &pe):
		pe.Message = clean(pe.Message)
	case errors.As(err, &ue) && ue.Err != nil:
		ue.Err = errors.New(clean(ue.Err.Error()))
	}
	return err
}
