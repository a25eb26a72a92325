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
	// ErrMissingKey means a route that requires an Idempotency-Key got a
	// request without one (400).
	ErrMissingKey = errors.New("idempotency key required")
	// ErrIncompleteBody means the middleware could not read the request's
	// body whole (the server's read timeout cut a slow client off, or the
	// client stopped sending): nothing was claimed (408).
	ErrIncompleteBody = errors.New("the request body did not arrive whole")
	// ErrBodyTooLarge means the request's body is larger than the
	// middleware reads for a fingerprint: nothing was claimed (413).
	// idemhttp.TooLargeError, which names the limit, is one.
	ErrBodyTooLarge = errors.New("the request body is larger than the route accepts")
	// ErrNotCommitted means the transaction that finished the key did not
	// commit (COMMIT itself failed: a deferred constraint, a serialization
	// failure): nothing was stored, the key is not finished, and the kit
	// has freed it, so the client retries with the same key (503, with
	// Retry-After).
	ErrNotCommitted = errors.New("the transaction that finished the idempotency key did not commit")
	// ErrNoResponse means a handler under the middleware returned without
	// writing any answer and without an error: nothing is stored, the key
	// is freed, and the client is told so (500), since a retry is safe.
	ErrNoResponse = errors.New("the handler wrote no response; the key is freed, retry is safe")
)

// InProgressError is ErrInProgress with how long the client should wait
// before it asks again (see retryAfter).
type InProgressError struct {
	RetryAfter time.Duration
	// Held reports whether the holder's lease still runs by the database
	// clock. Store.Get sets it: false means the lease ran out, so the next
	// claim takes the key over.
	Held bool
}

func (e *InProgressError) Error() string { return ErrInProgress.Error() }

// Is makes errors.Is(err, ErrInProgress) hold.
func (e *InProgressError) Is(target error) bool { return target == ErrInProgress }

// The bounds of the Retry-After a key in progress is answered with.
const (
	minRetryAfter = time.Second
	maxRetryAfter = 5 * time.Second
)

// retryAfter estimates when asking again about a started key is useful:
// about as long as its attempt has run already (a slow call tends to stay
// slow), from 1 to 5 s, and no later than its lease runs out, when a retry
// may take it over. It is never the lease itself: a holder that is alive
// renews its lease for as long as it works, so what is left of the lease
// says nothing about when the answer will exist, and a client told to wait
// that long would wait for nothing.
func retryAfter(k Key) time.Duration {
	d := min(max(k.Age, minRetryAfter), maxRetryAfter)
	if k.LeaseLeft > 0 && k.LeaseLeft < d {
		d = max(k.LeaseLeft, minRetryAfter)
	}
	return d
}

// ScopeError is a Scope function's refusal of a request: who sends it is not
// known (no credentials, a bad token) or may not use the route. The adapters
// answer it with Status as problem+json (RefusalOf); nothing is claimed, so
// the key stays free. Any other error of a Scope is a 500, logged.
type ScopeError struct {
	// Status is the answer's status; default 401 Unauthorized.
	Status int
	// Detail is what the client is told; default the status's text.
	Detail string
	// Err is the cause, for logs and errors.Is; never shown to the client.
	Err error
}

func (e *ScopeError) Error() string {
	if e.Err != nil {
		return "scope refused: " + e.Err.Error()
	}
	return "scope refused"
}

// Unwrap returns the cause.
func (e *ScopeError) Unwrap() error { return e.Err }
