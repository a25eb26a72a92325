package web

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/database"
	"exactlyonce/internal/problem"
)

// Failure is an error resolved to its row of the error table
// (problem.Kind), with what this request adds to it. Handlers return one to
// refuse a request; Classify turns every other error into one.
type Failure struct {
	Kind problem.Kind
	// Detail tells a developer what in this request was wrong (API only).
	Detail string
	// Reason is the domain's own account of what was refused, fit for a
	// shopper; a page shows it after the row's sentence.
	Reason     string
	RetryAfter time.Duration
	// Errors places what is wrong in the request's body (API only).
	Errors []problem.FieldError
	// Left is what is left to refund of an order (API only).
	Left *int64
}

func (f *Failure) Error() string { return f.Kind.Title + ": " + f.Detail }

// Fail returns a Failure of kind with a request-specific detail.
func Fail(kind problem.Kind, detail string) *Failure {
	return &Failure{Kind: kind, Detail: detail}
}

// Renderer writes the answer to a Failure in one audience's format:
// problem+json for machine clients (WriteProblem), an HTML page for people
// (WritePage). err is the error the handler returned, for a renderer that
// honours a more specific answer (a page's own refusal).
type Renderer func(c echo.Context, f *Failure, err error) error

// Errors is the one place errors become responses, for both faces of the
// server: the API's route set answers with WriteProblem, the pages' with
// WritePage, and Echo's own error handler (Handle) takes what neither did.
type Errors struct {
	Log *slog.Logger
}

// With gives a route group its error renderer: every error its handlers
// and the middleware after this one return is answered by it. The audience
// is chosen where the routes are registered, never by looking at the URL.
func (e *Errors) With(write Renderer) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := next(c); err != nil {
				e.answer(c, err, write)
			}
			return nil
		}
	}
}

// Handle is Echo's error handler: it answers what no route group's
// renderer took, which is a route outside the groups (the probes, the
// problem documentation), a global middleware's refusal, or the router's
// own 404 or 405. Those are machine clients' unless a group said
// otherwise, so they get problem+json.
func (e *Errors) Handle(err error, c echo.Context) {
	e.answer(c, err, WriteProblem)
}

// answer turns err into a response. Client errors are logged as warnings,
// everything else as an error with the request id; users never see the
// text of an unexpected error. It does nothing once the response is
// committed.
func (e *Errors) answer(c echo.Context, err error, write Renderer) {
	if c.Response().Committed {
		return
	}
	f := Classify(err)
	status := f.Kind.Status
	if pe, ok := errors.AsType[*PageError](err); ok {
		status = pe.Status
	}
	// The request's context adds its request id and its trace to each line.
	ctx := c.Request().Context()
	log := e.Log.With("method", c.Request().Method, "route", c.Path())
	if f.Kind == problem.Internal && clientGone(c, err) {
		// Nobody reads this answer, and it is no fault of ours: an
		// error logged and counted as a 500 would page an operator for a
		// client's timeout (the chaos harness found these behind a
		// stalled database: its clients hang up after 5 s).
		log.InfoContext(ctx, "client went away", "status", StatusClientClosedRequest, "err", err)
		c.Response().WriteHeader(StatusClientClosedRequest)
		return
	}
	if status >= 500 {
		log.ErrorContext(ctx, "request failed", "status", status, "err", err)
	} else {
		log.WarnContext(ctx, "request refused", "status", status, "problem", f.Kind.Slug, "err", err)
	}
	if f.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(RetryAfterSeconds(f.RetryAfter)))
	}
	if werr := write(c, f, err); werr != nil {
		log.ErrorContext(ctx, "write error response", "err", werr)
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

// RetryAfterSeconds rounds up: telling a client to come back before the lock
// expires only earns it another 409.
func RetryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// databaseRetryAfter is what a client is told to wait while the database is
// out of reach: long enough for a restart to make progress, short enough
// that a client is not kept away once it is back.
const databaseRetryAfter = 2 * time.Second

// databaseUnavailable reports whether err is an outage of the database
// (translated once, by package database) rather than a fault of the request
// or of the code: it passes by itself, so it is a 503, never a 500. A
// serialization Failure that outlived InTx's retries is answered the same
// way, as running the request again may succeed.
func databaseUnavailable(err error) bool {
	return errors.Is(err, database.ErrUnavailable) || errors.Is(err, idem.ErrUnavailable) ||
		errors.Is(err, database.ErrSerialization)
}
