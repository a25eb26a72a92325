package idem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// HeaderReplayed marks an answer replayed from the store.
const HeaderReplayed = "Idempotent-Replayed"

// replayedHeaders are the response headers stored and replayed with a key's
// answer; others (cookies, dates, request IDs) belong to one response only.
var replayedHeaders = []string{echo.HeaderLocation, echo.HeaderContentType}

// MiddlewareConfig configures Middleware.
type MiddlewareConfig struct {
	Store *Store
	// Scope names the caller a key belongs to (a customer or API client
	// ID); a key is never matched across scopes. An error is returned as is.
	Scope func(c echo.Context) (string, error)
	// Required refuses requests without a key (400) instead of passing
	// them through unprotected.
	Required bool
	// Wait is how long a request may wait for another attempt holding its
	// key before it is answered 409 (ClaimOrAwait). Zero answers 409 at
	// once.
	Wait time.Duration
	// MaxBody is the largest body read for the fingerprint; default 1 MiB.
	MaxBody int64
	// Refuse answers a request the key refuses: status 400, 409 or 422 and
	// err one of ErrBadKey, ErrInProgress (an *InProgressError with its
	// RetryAfter), ErrLockLost (a newer attempt took the key over, so the
	// handler's answer was not stored and is not sent) or ErrMismatch. By
	// default it is returned as an *echo.HTTPError for the application's
	// error handler.
	Refuse func(c echo.Context, status int, err error) error
}

// LockOf returns the lock the middleware holds for this request, for a
// handler that finishes the key in its own transaction (Lock.FinishTx) so
// that its write and the stored answer land together. Nil without a key.
func LockOf(c echo.Context) *Lock {
	l, _ := c.Get("idem.lock").(*Lock)
	return l
}

// Middleware makes a JSON endpoint idempotent under the Idempotency-Key
// header. The fingerprint covers the method, the route pattern and the
// body with its members sorted. A first request runs the handler and stores
// its answer (2xx to 4xx; a 5xx or an error releases the key, so a retry
// runs again); a retry with the same key and body gets the stored status,
// body and Location and Content-Type headers with Idempotent-Replayed: true.
//
// A handler that writes to the database should finish the key itself in
// its write's transaction (LockOf(c).FinishTx): otherwise a crash between
// its write and the middleware's finish leaves the key to be taken over and
// the handler run again once the lease runs out.
func Middleware(cfg MiddlewareConfig) echo.MiddlewareFunc {
	if cfg.MaxBody == 0 {
		cfg.MaxBody = 1 << 20
	}
	if cfg.Refuse == nil {
		cfg.Refuse = func(_ echo.Context, status int, err error) error {
			return echo.NewHTTPError(status, err.Error()).SetInternal(err)
		}
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			values := c.Request().Header.Values("Idempotency-Key")
			if len(values) == 0 && !cfg.Required {
				return next(c)
			}
			if len(values) != 1 {
				return cfg.Refuse(c, http.StatusBadRequest, badKey("send exactly one Idempotency-Key header"))
			}
			key, err := ParseKey(values[0])
			if err != nil {
				return cfg.Refuse(c, http.StatusBadRequest, err)
			}
			scope, err := cfg.Scope(c)
			if err != nil {
				return err
			}
			body, err := io.ReadAll(io.LimitReader(c.Request().Body, cfg.MaxBody+1))
			if err != nil {
				// The client was too slow or stopped sending: nothing was
				// claimed, and its request may be sent again (408).
				return fmt.Errorf("read body: %w: %w", ErrIncompleteBody, err)
			}
			if int64(len(body)) > cfg.MaxBody {
				return echo.ErrStatusRequestEntityTooLarge
			}
			c.Request().Body = io.NopCloser(bytes.NewReader(body))
			return serve(c, next, cfg, Request{
				Scope: scope, Key: key,
				Fingerprint: Fingerprint([]byte(c.Request().Method), []byte(c.Path()), NormalizeJSON(body)),
			})
		}
	}
}

func serve(c echo.Context, next echo.HandlerFunc, cfg MiddlewareConfig, r Request) error {
	ctx := c.Request().Context()
	claim, err := cfg.Store.ClaimOrAwait(ctx, r, cfg.Wait)
	switch {
	case errors.Is(err, ErrInProgress):
		return cfg.Refuse(c, http.StatusConflict, err)
	case errors.Is(err, ErrMismatch):
		return cfg.Refuse(c, http.StatusUnprocessableEntity, err)
	case err != nil:
		return err
	case claim.Replay != nil:
		return Replay(c, *claim.Replay)
	}

	lock := claim.Lock
	held, stop := lock.Keep(ctx)
	defer stop()
	c.SetRequest(c.Request().WithContext(held))
	c.Set("idem.lock", lock)
	real := c.Response().Writer
	rec := &recorder{ResponseWriter: real, header: real.Header().Clone()}
	c.Response().Writer = rec
	err = next(c)
	c.Response().Writer = real
	background := context.WithoutCancel(ctx)
	switch {
	case lock.finished:
	case err != nil || rec.status >= 500 || rec.status == 0:
		// Nothing worth replaying: let a retry run the handler again.
		if relErr := lock.Release(background); relErr != nil && !errors.Is(relErr, ErrLockLost) && err == nil {
			err = relErr
		}
	default:
		finErr := lock.Finish(background, rec.response())
		if errors.Is(finErr, ErrLockLost) {
			// Another attempt took the key over: the answer recorded here
			// is not the one a retry will get, so it is not sent either.
			rec.discard(c.Response())
			return cfg.Refuse(c, http.StatusConflict, ErrLockLost)
		}
		if finErr != nil {
			return finErr
		}
	}
	if flushErr := rec.flush(); err == nil {
		err = flushErr
	}
	return err
}

// Replay writes a stored answer, marked with Idempotent-Replayed: true.
func Replay(c echo.Context, resp Response) error {
	return Write(c, Outcome{Response: resp, Replayed: true})
}

// Write sends an outcome of Do: its status, the stored headers and the body,
// marked with Idempotent-Replayed: true only when it is a replay, so a
// client can tell a fresh answer from one it gets again.
func Write(c echo.Context, o Outcome) error {
	h := c.Response().Header()
	for k, v := range o.Header {
		h.Set(k, v)
	}
	if o.Replayed {
		h.Set(HeaderReplayed, "true")
	}
	c.Response().WriteHeader(o.Status)
	_, err := c.Response().Write(o.Body)
	return err
}

// recorder holds a handler's answer back until it is stored, so that a
// client never sees an answer its retry would not get. It has headers of its
// own, sent with the answer by flush.
type recorder struct {
	http.ResponseWriter
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) { r.status = status }

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) response() Response {
	h := map[string]string{}
	for _, name := range replayedHeaders {
		if v := r.Header().Get(name); v != "" {
			h[name] = v
		}
	}
	return Response{Status: r.status, Header: h, Body: bytes.Clone(r.body.Bytes())}
}

func (r *recorder) flush() error {
	if r.status == 0 {
		return nil
	}
	h := r.ResponseWriter.Header()
	clear(h)
	for k, v := range r.header {
		h[k] = v
	}
	r.ResponseWriter.WriteHeader(r.status)
	_, err := r.ResponseWriter.Write(r.body.Bytes())
	return err
}

// discard drops the recorded answer, and Echo's note that the handler
// committed one, so that another answer can be written in its place.
func (r *recorder) discard(resp *echo.Response) {
	r.status, r.header = 0, nil
	r.body.Reset()
	resp.Committed, resp.Status, resp.Size = false, http.StatusOK, 0
}
