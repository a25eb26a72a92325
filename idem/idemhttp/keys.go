// Package idemhttp makes net/http routes and HTML forms idempotent with the
// idem kit: a JSON route under the Idempotency-Key header (Keys), and a form
// that carries a key minted when it was rendered (Form). It works with the
// standard library's ServeMux and with any router built on net/http (chi,
// gorilla); idemecho and idemecho5 adapt it to Echo v4 and v5.
package idemhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"exactlyonce/idem"
)

// Options configure Keys.
type Options struct {
	// Store keeps the keys. Required.
	Store *idem.Store
	// Scope names whom a request's key belongs to (an account, an API
	// client): a key is never matched across scopes, so one client can
	// neither see nor block another's. Required. To refuse the request
	// (no credentials, a bad token), return an *idem.ScopeError: it is
	// answered with its status (default 401) as problem+json. Any other
	// error is answered as Refuse answers it (by default logged, and a
	// 500).
	Scope func(r *http.Request) (string, error)
	// Optional lets requests without an Idempotency-Key through,
	// unprotected; by default they are refused (400).
	Optional bool
	// Wait is how long a request waits for another request holding its key
	// before it is answered 409; default idem.DefaultWait, less than zero
	// not at all.
	Wait time.Duration
	// MaxBody is the largest body read for the fingerprint; default 1 MiB.
	MaxBody int64
	// Route names the route in the fingerprint, so that a key used on one
	// route is refused on another; default r.Pattern (ServeMux). With chi,
	// pass chi.RouteContext(r.Context()).RoutePattern().
	Route func(r *http.Request) string
	// Refuse answers a request the kit refused (a bad or missing key, a key
	// in progress or reused, an outage: see idem.RefusalOf), the Scope's
	// errors and Handle's work's; default WriteError, after logging
	// (Log) every error that is not a refusal, since its 500 says nothing
	// of it.
	Refuse func(w http.ResponseWriter, r *http.Request, err error)
	// Log is where the default Refuse logs the errors it answers 500;
	// default slog.Default().
	Log *slog.Logger
}

// Keys makes JSON routes idempotent under the Idempotency-Key header (the
// IETF draft, with Stripe's conventions).
type Keys struct {
	o Options
}

// New returns Keys configured by o.
func New(o Options) *Keys {
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	if o.Route == nil {
		o.Route = func(r *http.Request) string { return r.Pattern }
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Refuse == nil {
		o.Refuse = logging(o.Log)
	}
	return &Keys{o: o}
}

// Handle is a route whose whole job is one write that needs nothing of the
// request but its key: work runs at most once per key, in a transaction
// that finishes the key with its response, and the response is sent (and
// replayed to every retry, with Idempotent-Replayed: true). Return
// idem.JSON(status, v) from it. A work that fails writes nothing and frees
// the key; its error is answered as Refuse answers it. A route whose work
// reads the request (its body, its path) is a handler under Middleware
// that calls Do.
func (k *Keys) Handle(work idem.Work) http.Handler {
	return k.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := Do(w, r, work); err != nil {
			k.o.Refuse(w, r, err)
		}
	}))
}

// Do runs work under the key Middleware holds for r, in the transaction
// that finishes the key with work's response, and sends that response: the
// JSON route's Form.Submit. Call it from a handler under Middleware, once
// the request is read and checked (Middleware has put the body back), and
// answer its error as Options.Refuse does (return it from a handler under
// Func, which does): work's own error, which wrote nothing and freed the
// key, or the kit's. A request that holds no
// key (one without Idempotency-Key on an Optional route, or a handler not
// under Middleware) is refused with idem.ErrMissingKey, and work does not
// run.
func Do(w http.ResponseWriter, r *http.Request, work idem.Work) error {
	lock := LockOf(r.Context())
	if lock == nil {
		return fmt.Errorf("idemhttp.Do: no key held for this request: %w", idem.ErrMissingKey)
	}
	resp, err := lock.Do(r.Context(), work)
	if err != nil {
		return err
	}
	Write(w, idem.Outcome{Response: resp})
	return nil
}

// Middleware protects next, for a handler that writes in a transaction of
// its own: it finishes the key in that transaction with Do (or
// LockOf(ctx).FinishTx), so that its write and the stored answer land
// together; the key counts as finished only once that transaction
// committed (Lock.Stored), and a COMMIT that failed frees the key and is
// refused with idem.ErrNotCommitted (503). Only that answer is the key's
// (or one the handler stores with LockOf(ctx).Finish): whatever else the
// handler answers (a refusal before the work began, such as failed
// validation; its answer to a work that failed; a 5xx) is sent but not
// stored, and the key is freed, so that the corrected request runs under
// the same key, as Stripe does and as idemecho does for an error returned
// before Do. A handler that panics frees the key too, and one that writes
// nothing frees it and is answered idem.ErrNoResponse (500). A stored
// answer is sent only once it is stored; if another request took the key
// over meanwhile, the client is told 409 (idem.ErrLockLost) instead.
func (k *Keys) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, protected, err := k.Read(w, r)
		switch {
		case err != nil:
			k.o.Refuse(w, r, err)
			return
		case !protected:
			next.ServeHTTP(w, r)
			return
		}
		if err := Serve(w, r, k.o.Store, req, k.Wait(), func(w http.ResponseWriter, r *http.Request) error {
			next.ServeHTTP(w, r)
			return nil
		}); err != nil {
			k.o.Refuse(w, r, err)
		}
	})
}

// Func is Middleware for a handler that returns its error, as a route that
// reads its request and calls Do does: an error it returns (Do's, or its
// own before Do) is answered as Options.Refuse answers the kit's (by
// default logged unless it is a refusal, then WriteError), so a route's
// errors are told and logged the same way whichever side refused. What the
// handler writes before it returns an error is sent as it is.
func (k *Keys) Func(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return k.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			k.o.Refuse(w, r, err)
		}
	}))
}

// Read reads a request's key, scope and body into the kit's request, and
// puts the body back for the handler: the kit's rule for a JSON route's
// fingerprint is the method, the route and the body with its members
// sorted (idem.NormalizeJSON). protected is false for a request without a
// key on an Optional route. The errors are refusals (idem.RefusalOf) and
// the Scope's own. Middleware is built on it, and so are idemecho's and idemecho5's.
func (k *Keys) Read(w http.ResponseWriter, r *http.Request) (req idem.Request, protected bool, err error) {
	values := r.Header.Values("Idempotency-Key")
	switch {
	case len(values) == 0 && k.o.Optional:
		return idem.Request{}, false, nil
	case len(values) == 0:
		return idem.Request{}, false, idem.ErrMissingKey
	case len(values) > 1:
		return idem.Request{}, false, fmt.Errorf("send exactly one Idempotency-Key header: %w", idem.ErrBadKey)
	}
	key, err := idem.ParseKey(values[0])
	if err != nil {
		return idem.Request{}, false, err
	}
	scope, err := k.o.Scope(r)
	if err != nil {
		return idem.Request{}, false, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, k.o.MaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return idem.Request{}, false, &TooLargeError{Limit: k.o.MaxBody}
	}
	if err != nil {
		return idem.Request{}, false, fmt.Errorf("read body: %w: %w", idem.ErrIncompleteBody, err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return idem.Request{Scope: scope, Key: key,
		Fingerprint: idem.Fingerprint([]byte(r.Method), []byte(k.o.Route(r)), idem.NormalizeJSON(body))}, true, nil
}

// Store is the store the keys are kept in.
func (k *Keys) Store() *idem.Store { return k.o.Store }

// Wait is how long a request waits for the one holding its key.
func (k *Keys) Wait() time.Duration { return waitOf(k.o.Wait) }

// TooLargeError is a body over Options.MaxBody (413).
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the body is larger than %d bytes", e.Limit)
}

// Is makes errors.Is(err, idem.ErrBodyTooLarge) hold, so that
// idem.RefusalOf answers it.
func (e *TooLargeError) Is(target error) bool { return target == idem.ErrBodyTooLarge }

// logging is the default Refuse: WriteError, after logging an error that
// is not a refusal (a Scope's or a work's own), which its 500 hides.
func logging(log *slog.Logger) func(w http.ResponseWriter, r *http.Request, err error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		if _, ok := idem.RefusalOf(err); !ok {
			log.ErrorContext(r.Context(), "idem: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		WriteError(w, r, err)
	}
}

func waitOf(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return idem.DefaultWait
	case d < 0:
		return 0
	}
	return d
}

// LockOf returns the lock Middleware holds for the request whose context is
// ctx, or the lock a work runs under (idem.LockOf); nil without one. It
// carries what the kit worked out for the request: its Scope (what
// Options.Scope or a Form's Visitor returned, so a handler or a work need
// not compute it again), its Key, and the OperationID to derive a
// downstream call's key from.
func LockOf(ctx context.Context) *idem.Lock { return idem.LockOf(ctx) }
