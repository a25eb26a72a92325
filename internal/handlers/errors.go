package handlers

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/database"
	"exactlyonce/internal/problem"
)

// failure is an error resolved to its row of the error table
// (problem.Kind), with what this request adds to it. Handlers return one to
// refuse a request; classify turns every other error into one.
type failure struct {
	kind problem.Kind
	// detail tells a developer what in this request was wrong (API only).
	detail string
	// reason is the domain's own account of what was refused, fit for a
	// shopper; a page shows it after the row's sentence.
	reason     string
	retryAfter time.Duration
}

func (f *failure) Error() string { return f.kind.Title + ": " + f.detail }

// fail returns a failure of kind with a request-specific detail.
func fail(kind problem.Kind, detail string) *failure {
	return &failure{kind: kind, detail: detail}
}

// errorRenderer writes the answer to a failure in one audience's format:
// problem+json for machine clients (writeProblem), an HTML page for people
// (writePage). err is the error the handler returned, for a renderer that
// honours a more specific answer (a page's own refusal).
type errorRenderer func(c echo.Context, f *failure, err error) error

// answersWith gives a route group its error renderer: every error its
// handlers and the middleware after this one return is answered by it.
// The audience is chosen where the routes are registered, never by
// looking at the URL.
func (h *Handler) answersWith(write errorRenderer) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := next(c); err != nil {
				h.answerError(c, err, write)
			}
			return nil
		}
	}
}

// handleError is Echo's error handler: it answers what no route group's
// renderer took, which is a route outside the groups (the probes, the
// problem documentation), a global middleware's refusal, or the router's
// own 404 or 405. Those are machine clients' unless a group said
// otherwise, so they get problem+json.
func (h *Handler) handleError(err error, c echo.Context) {
	h.answerError(c, err, writeProblem)
}

// answerError is the one place errors become responses. Client errors are
// logged as warnings, everything else as an error with the request id;
// users never see the text of an unexpected error. It does nothing once
// the response is committed.
func (h *Handler) answerError(c echo.Context, err error, write errorRenderer) {
	if c.Response().Committed {
		return
	}
	f := classify(err)
	status := f.kind.Status
	if pe, ok := errors.AsType[*pageError](err); ok {
		status = pe.status
	}
	log := h.log.With("request_id", c.Response().Header().Get(echo.HeaderXRequestID),
		"method", c.Request().Method, "route", c.Path())
	if f.kind == problem.Internal && clientGone(c, err) {
		// Nobody reads this answer, and it is no fault of ours: an
		// error logged and counted as a 500 would page an operator for a
		// client's timeout (the chaos harness found these behind a
		// stalled database: its clients hang up after 5 s).
		log.Info("client went away", "status", StatusClientClosedRequest, "err", err)
		c.Response().WriteHeader(StatusClientClosedRequest)
		return
	}
	if status >= 500 {
		log.Error("request failed", "status", status, "err", err)
	} else {
		log.Warn("request refused", "status", status, "problem", f.kind.Slug, "err", err)
	}
	if f.retryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(f.retryAfter)))
	}
	if werr := write(c, f, err); werr != nil {
		log.Error("write error response", "err", werr)
	}
}

// StatusClientClosedRequest is what the logs and metrics record for a
// request whose client hung up before it was answered: nginx's 499, which
// no client ever receives.
const StatusClientClosedRequest = 499

// clientGone reports whether err is the request's own context cancelled
// because its client closed the connection, rather than a cancellation of
// the code's own making, which stays a 500.
func clientGone(c echo.Context, err error) bool {
	return errors.Is(err, context.Canceled) && errors.Is(c.Request().Context().Err(), context.Canceled)
}

// retryAfterSeconds rounds up: telling a client to come back before the lock
// expires only earns it another 409.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// databaseRetryAfter is what a client is told to wait while the database is
// out of reach: long enough for a restart to make progress, short enough
// that a client is not kept away once it is back.
const databaseRetryAfter = 2 * time.Second

// databaseUnavailable reports whether err is an outage of the database
// (translated once, by package database) rather than a fault of the request
// or of the code: it passes by itself, so it is a 503, never a 500. A
// serialization failure that outlived InTx's retries is answered the same
// way, as running the request again may succeed.
func databaseUnavailable(err error) bool {
	return errors.Is(err, database.ErrUnavailable) || errors.Is(err, idem.ErrUnavailable) ||
		errors.Is(err, database.ErrSerialization)
}
