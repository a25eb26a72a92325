package checkout

import (
	"errors"
	"time"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/payment"
)

// ErrKeyReused means the key was first used for a different request. It is
// a client bug, and replaying the other request's answer would hide it. It
// is the kit's error, so one mapping serves orders and every other form.
var ErrKeyReused = idem.ErrMismatch

// ErrLockLost means this attempt outlived its lock and a newer attempt took
// the key over; the finish matched no row and wrote nothing. It is the
// kit's error, as ErrKeyReused is.
var ErrLockLost = idem.ErrLockLost

// ErrLeaseLapsing means the attempt stopped its own provider call because it
// could not renew its lock in time: rather than let the lock expire while the
// call runs, and a newer attempt take over beside it, it fences itself off
// (see withLease). The outcome of the call is unknown; Place returns it
// inside a *OutcomeUnknownError, and the key stays started for a retry or the
// completer. It is the kit's error, as ErrLockLost is.
var ErrLeaseLapsing = idem.ErrLeaseLapsing

// ErrAbandoned means the process is shutting down and gave up on the attempt
// where it was (see Engine.Abandon). Place returns it as an *AbandonedError.
var ErrAbandoned = errors.New("attempt abandoned by shutdown")

// AbandonedError is ErrAbandoned with when to retry. Nothing was stored by
// the attempt; its key, if it claimed one, stays started and is handed back
// (its lease ended), so that a retry, to another instance, resumes the
// operation at once.
type AbandonedError struct {
	RetryAfter time.Duration
}

func (e *AbandonedError) Error() string { return ErrAbandoned.Error() }
func (e *AbandonedError) Unwrap() error { return ErrAbandoned }

// InvalidOrderError is a request the engine refused before claiming the key;
// nothing was stored and the key is still free.
type InvalidOrderError struct {
	Reason string
	// Pointer is where in an order body the fault is, a JSON Pointer
	// ("/card", "/items/0/sku").
	Pointer string
	// Card is set when the card number is what is wrong; Priced is then
	// the order as priced, for a form shown again with its lines.
	Card bool
	// CheckDigit is set when the card number has the length of one but
	// fails the Luhn check: a mistyped digit.
	CheckDigit bool
	Priced     catalog.Priced
}

func (e *InvalidOrderError) Error() string { return e.Reason }

// InProgressError means another attempt holds the key's lock, with how
// long it still holds by the database clock (RetryAfter). It is the kit's
// error, so one mapping serves orders and the kit's routes, as ErrKeyReused
// does.
type InProgressError = idem.InProgressError

// OutcomeUnknownError means the outcome of the payment is not known: the
// provider's answer is missing or failed, also when asked again
// (Config.ProviderRetries). Nothing was stored and the key stays started,
// handed back for the client: a retry after RetryAfter takes it over and
// resumes; the provider's own deduplication makes that safe.
type OutcomeUnknownError struct {
	Reason     payment.Reason
	RetryAfter time.Duration
	Err        error
}

func (e *OutcomeUnknownError) Error() string { return "payment provider: " + e.Err.Error() }
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// AuthenticationRequiredError is an order whose payment the shopper must
// authenticate with their bank first (3-D Secure): nothing is charged yet
// and nothing is stored as the key's answer; the shopper goes to URL, the
// bank's page, which sends them back to the attempt's ReturnURL. The key
// stays started until the return, the provider's webhook, a retry or the
// completer settles it; a retry of the same key meanwhile is sent to the
// bank again.
type AuthenticationRequiredError struct{ IntentID, URL string }

func (e *AuthenticationRequiredError) Error() string {
	return "the payment waits for the shopper to authenticate it with their bank (payment intent " + e.IntentID + ")"
}
