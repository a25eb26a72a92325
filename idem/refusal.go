package idem

import (
	"errors"
	"net/http"
	"strings"
	"time"
)

// Refusal is how an HTTP API answers one of the kit's errors: the status,
// the problem's slug and title (RFC 9457), what a client should do, and
// how long it should wait before it asks again.
type Refusal struct {
	Status     int
	Slug       string // e.g. "idempotency-key-reused"
	Title      string
	Detail     string
	RetryAfter time.Duration
}

// RefusalOf maps an error of the kit onto its answer, and reports false for
// any other error (the application's own, or a bug: a 500). It is the one
// mapping the adapters use, and an application's error handler can use it
// too, so that a kit's 409 and its own agree.
//
// ErrNotFound, which a protected request never meets (a key that vanishes
// under a claim is claimed again) but a status route does (Form.Status,
// Store.Get), is a 404: nothing runs under the key and nothing is kept for
// it, so there is nothing to wait for. A form's status route does better
// to show the form again, as the examples do.
func RefusalOf(err error) (Refusal, bool) {
	var busy *InProgressError
	var scope *ScopeError
	switch {
	case errors.As(err, &scope):
		return scope.refusal(), true
	case errors.Is(err, ErrBadKey):
		return Refusal{http.StatusBadRequest, "invalid-idempotency-key", "Invalid Idempotency-Key", keyProblem(err), 0}, true
	case errors.Is(err, ErrMissingKey):
		return Refusal{http.StatusBadRequest, "missing-idempotency-key", "Idempotency-Key required",
			"send an Idempotency-Key header with a unique value per operation", 0}, true
	case errors.Is(err, ErrFormKeyMissing), errors.Is(err, ErrFormKeyForeign), errors.Is(err, ErrFormKeyExpired):
		return Refusal{http.StatusBadRequest, "form-refused", "Form refused", err.Error(), 0}, true
	case errors.Is(err, ErrMismatch):
		return Refusal{http.StatusUnprocessableEntity, "idempotency-key-reused", "Idempotency-Key reused",
			"this key was first sent with another request; use a new key for a new operation", 0}, true
	case errors.As(err, &busy):
		return Refusal{http.StatusConflict, "request-in-progress", "Request in progress",
			"a request with this key is still running; retry after Retry-After seconds", max(busy.RetryAfter, minRetryAfter)}, true
	case errors.Is(err, ErrInProgress):
		return Refusal{http.StatusConflict, "request-in-progress", "Request in progress",
			"a request with this key is still running; retry after Retry-After seconds", minRetryAfter}, true
	case errors.Is(err, ErrNotFound):
		return Refusal{http.StatusNotFound, "idempotency-key-not-found", "Nothing stored under this key",
			"no request with this key is running or has an answer kept: it failed and wrote nothing, or its answer expired; send the request again", 0}, true
	case errors.Is(err, ErrLockLost):
		return Refusal{http.StatusConflict, "request-superseded", "Request superseded",
			"a newer request with this key took the operation over; retry to get its result", minRetryAfter}, true
	case errors.Is(err, ErrBodyTooLarge):
		return Refusal{http.StatusRequestEntityTooLarge, "body-too-large", "Body too large", err.Error(), 0}, true
	case errors.Is(err, ErrIncompleteBody):
		return Refusal{http.StatusRequestTimeout, "request-timeout", "Request timeout",
			"the body did not arrive whole; send the request again", 0}, true
	case errors.Is(err, ErrNotCommitted):
		return Refusal{http.StatusServiceUnavailable, "not-committed", "Not committed",
			"the write did not commit and nothing was stored; retry with the same key after Retry-After seconds", minRetryAfter}, true
	case errors.Is(err, ErrNoResponse):
		return Refusal{http.StatusInternalServerError, "no-response", "No response",
			"the server wrote no response and stored nothing; the key is freed, so a retry with the same key is safe", 0}, true
	case errors.Is(err, ErrUnavailable):
		return Refusal{http.StatusServiceUnavailable, "service-unavailable", "Service unavailable",
			"the database did not answer; retry with the same key after Retry-After seconds", 2 * time.Second}, true
	}
	return Refusal{}, false
}

// refusal answers a Scope's refusal with its status, 401 by default, and a
// slug and title of the status ("unauthorized", "Unauthorized").
func (e *ScopeError) refusal() Refusal {
	status := e.Status
	if status == 0 {
		status = http.StatusUnauthorized
	}
	title := http.StatusText(status)
	slug := strings.ToLower(strings.ReplaceAll(title, " ", "-"))
	if title == "" {
		title, slug = "Scope refused", "scope-refused"
	}
	detail := e.Detail
	if detail == "" {
		detail = title
	}
	return Refusal{Status: status, Slug: slug, Title: title, Detail: detail}
}
