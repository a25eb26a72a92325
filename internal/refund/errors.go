package refund

import (
	"errors"
	"fmt"
	"time"
)

// The refusals of an ask, each met before anything is reserved: the key is
// given up, so the client may send a corrected ask under it.
var (
	// ErrNotFound: no such order, or not this customer's.
	ErrNotFound = errors.New("no such order")
	// ErrCancelled: the order is cancelled already (by another key).
	ErrCancelled = errors.New("the order is cancelled already")
)

// WindowClosedError is a cancel asked after the order's cancel window.
type WindowClosedError struct{ Window time.Duration }

func (e *WindowClosedError) Error() string {
	return fmt.Sprintf("orders can be cancelled only within %s of being placed", e.Window)
}

// ExceedsError is a refund of more than is left to refund of the order
// (nothing, for a cancel of an order refunded in full).
type ExceedsError struct {
	Asked, Left int64
	Currency    string
}

func (e *ExceedsError) Error() string {
	if e.Left == 0 {
		return "nothing is left to refund of this order"
	}
	return fmt.Sprintf("the refund asks %d, and %d (minor units of %s) is left to refund of this order", e.Asked, e.Left, e.Currency)
}

// OutcomeUnknownError is a refund the provider did not answer for sure: it
// may have been made. The key stays started with its lease ended, so the
// client's retry with the same key resumes it (asking the provider again
// under the same key), and the completer does if no retry comes.
type OutcomeUnknownError struct {
	RetryAfter time.Duration
	Err        error
}

func (e *OutcomeUnknownError) Error() string { return "refund outcome unknown: " + e.Err.Error() }
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }
