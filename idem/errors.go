package idem

import (
	"errors"
	"time"
)

// What the key store answers besides a lock or a stored response. Callers
// compare with errors.Is; the Echo middleware maps them to 409 and 422.
var (
	// ErrMismatch means the key was used before with another request: a
	// client bug, never retried (422).
	ErrMismatch = errors.New("idempotency key reused with another request")
	// ErrInProgress means another attempt holds the key and its lease
	// runs: the request should be retried later (409).
	ErrInProgress = errors.New("a request with this idempotency key is in progress")
	// ErrLockLost means the attempt no longer holds the key: its lease ran
	// out and another attempt took it over, or it finished or released the
	// key already. Its write must not land.
	ErrLockLost = errors.New("idempotency key lock lost")
	// ErrNotFound means the key is not in the store (never claimed, released,
	// or swept).
	ErrNotFound = errors.New("idempotency key not found")
)

// InProgressError is ErrInProgress with how long the client should wait
// before it retries: what is left of the holder's lease.
type InProgressError struct {
	RetryAfter time.Duration
}

func (e *InProgressError) Error() string { return ErrInProgress.Error() }

// Is makes errors.Is(err, ErrInProgress) hold.
func (e *InProgressError) Is(target error) bool { return target == ErrInProgress }
