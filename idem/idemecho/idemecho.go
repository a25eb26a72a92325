// Package idemecho adapts the idem kit's HTTP side (idemhttp) to Echo v4:
// a JSON route under the Idempotency-Key header (Keys) and a protected HTML
// form (Form), with Echo's context, route patterns and error handler. It is
// a module of its own (exactlyonce/idem/idemecho), so that the kit's core
// requires no web framework; idemecho5 is the same for Echo v5.
package idemecho

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
)

// Options configure Keys, as idemhttp.Options do, with Echo's context.
type Options struct {
	// Store keeps the keys. Required.
	Store *idem.Store
	// Scope names whom a request's key belongs to; a key is never matched
	// across scopes. Required. To refuse the request, return an
	// *idem.ScopeError: ErrorHandler answers it with its status (default
	// 401) as problem+json. Any other error is returned to Echo as it is,
	// for the application's error handler to answer and log (an
	// *echo.HTTPError keeps its status).
	Scope func(c echo.Context) (string, error)
	// Optional, Wait and MaxBody are idemhttp.Options'.
	Optional bool
	Wait     time.Duration
	MaxBody  int64
}

// Keys makes Echo routes idempotent under the Idempotency-Key header. Its
// refusals (idem.RefusalOf) are returned as errors, for the application's
// error handler to answer: ErrorHandler answers them as problem+json, with
// Retry-After.
type Keys struct {
	http *idemhttp.Keys
}

type contextKey struct{}

func contextOf(r *http.Request) echo.Context {
	c, _ := r.Context().Value(contextKey{}).(echo.Context)
	return c
}

// New returns Keys configured by o. The fingerprint names the route by its
// Echo pattern (c.Path()), so a key used on one route is refused on
// another.
func New(o Options) *Keys {
	return &Keys{http: idemhttp.New(idemhttp.Options{
		Store: o.Store, Optional: o.Optional, Wait: o.Wait, MaxBody: o.MaxBody,
		Scope: func(r *http.Request) (string, error) { return o.Scope(contextOf(r)) },
		Route: func(r *http.Request) string { return contextOf(r).Path() },
	})}
}

// Middleware protects the route's handler (idemhttp.Keys.Middleware): a
// handler that writes calls Do, or finishes the key in its own transaction
// with LockOf(c).FinishTx. Only that answer is the key's: an error the
// handler returns, or an answer it writes otherwise (before Do, say), is
// not stored, and the key is freed for the corrected request.
func (k *Keys) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request().WithContext(context.WithValue(c.Request().Context(), contextKey{}, c))
			req, protected, err := k.http.Read(c.Response(), r)
			if err != nil || !protected {
				if err == nil {
					err = next(c)
				}
				return err
			}
			return idemhttp.Serve(c.Response(), r, k.http.Store(), req, k.http.Wait(), func(w http.ResponseWriter, r *http.Request) error {
				resp := c.Response()
				real := resp.Writer
				resp.Writer = w
				c.SetRequest(r)
				err := next(c)
				// What the handler wrote went to the kit's recorder; Echo
				// must not take it as sent, so that the stored answer (or
				// a refusal) can be written in its place.
				resp.Writer, resp.Committed, resp.Status, resp.Size = real, false, http.StatusOK, 0
				return err
			})
		}
	}
}

// Handle is a route whose whole job is one write that needs nothing of the
// request but its key (idemhttp.Keys.Handle): work runs at most once per
// key, in the transaction that finishes the key. A route whose work reads
// the request is a handler under Middleware that calls Do.
func (k *Keys) Handle(work idem.Work) echo.HandlerFunc {
	return k.Middleware()(func(c echo.Context) error { return Do(c, work) })
}

// Do runs work under the key Middleware holds for the request, in the
// transaction that finishes the key with work's response, and sends that
// response (idemhttp.Do): the JSON route's Form.Submit. Call it from a
// handler under Middleware once the request is bound and checked, and
// return its error to Echo.
func Do(c echo.Context, work idem.Work) error {
	return idemhttp.Do(c.Response(), c.Request(), work)
}

// LockOf returns the lock Middleware holds for the request; nil without one.
// Its Scope is what Options.Scope returned for the request, its Key the
// request's key (idemhttp.LockOf).
func LockOf(c echo.Context) *idem.Lock { return idemhttp.LockOf(c.Request().Context()) }

// Write sends an outcome of idem.Store.Do, marked as a replay only when it
// is one.
func Write(c echo.Context, o idem.Outcome) error {
	idemhttp.Write(c.Response(), o)
	return nil
}

// ErrorHandler is an Echo error handler that answers the kit's refusals
// (idem.RefusalOf: a bad or missing key, a key reused or in progress, a body
// too large, the database out of reach, a Scope's idem.ScopeError) as
// idemhttp.WriteError does, with their status, problem+json and
// Retry-After, and hands every other error to next:
//
//	e.HTTPErrorHandler = idemecho.ErrorHandler(e.DefaultHTTPErrorHandler)
func ErrorHandler(next echo.HTTPErrorHandler) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if _, ok := idem.RefusalOf(err); !ok {
			next(err, c)
			return
		}
		if !c.Response().Committed {
			idemhttp.WriteError(c.Response(), c.Request(), err)
		}
	}
}
