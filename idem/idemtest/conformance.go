package idemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
)

// Adapter is one of the kit's web adapters (idemhttp, idemecho, idemecho5)
// as the conformance suite drives it: every adapter keeps the same promise,
// so the suite's cases are written once and run through each (Conformance).
type Adapter struct {
	// Name names the adapter in the subtests.
	Name string
	// Protect returns a server of POST /things under the adapter's key
	// middleware, with keys scoped by scope, whose handler is h: do is
	// the adapter's Do. Every error that is not the kit's refusal (h's, the
	// Scope's) is answered and logged to log the way an application of
	// the adapter does it (idemhttp: the default Refuse, Options.Log;
	// Echo: its error handler behind idemecho.ErrorHandler).
	Protect func(store *idem.Store, scope func(r *http.Request) (string, error), log *slog.Logger, h Handler) http.Handler
	// Handle returns a server of POST /things that is the adapter's
	// Keys.Handle(work), with keys scoped by scope and errors answered as
	// Protect's are.
	Handle func(store *idem.Store, scope func(r *http.Request) (string, error), work idem.Work) http.Handler
	// Form returns a server of the adapter's Form built from o (its
	// Visitor, when set, called through the adapter's own; its Layout and
	// StartOver passed on): GET and POST /send are h's, GET /send/status
	// is the Form's StatusHandler (o leaves StatusPath to its default);
	// and the Form's Core.
	Form func(o idemhttp.FormOptions, h FormHandler) (http.Handler, *idem.Form, error)
}

// Handler is a route's handler written once for every adapter: it reads r
// and writes w as a handler of the adapter would, do runs work under the
// request's key as the adapter's Do does, and lock is the adapter's
// LockOf.
type Handler func(w http.ResponseWriter, r *http.Request, do func(idem.Work) error, lock *idem.Lock) error

// FormHandler is a form's route written once for every adapter: key,
// submit and writeError are the adapter's Form.Key, Form.Submit and
// Form.WriteError for the request. Its error goes to the adapter's error
// handler.
type FormHandler func(w http.ResponseWriter, r *http.Request,
	key func() (idem.FormKey, error), submit func(fields []string, work idem.Work) error, writeError func(error) bool) error

// A conformance case sends one request whose handler (or scope) does what
// the case names, then the corrected request with the same key and another
// body, which the suite's handler serves the good way: a freed key runs it
// afresh; a stored answer refuses it as the key reused.
type conformanceCase struct {
	name    string
	handler Handler
	scope   func(r *http.Request) (string, error) // nil: "alice"
	panics  bool                                  // the handler panics: the first request gets no answer
	status  int
	problem string // the problem type's slug; "" when the answer is not a problem
	rows    int    // rows written by the first request
	stored  bool   // the first answer is the key's (replayed); otherwise the key is free
	logged  bool   // the first request's failure is logged (a 500 says nothing of it)
}

// insert is the work that writes a row and answers 201.
func insert(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
	var id int
	if err := tx.QueryRow(ctx, `INSERT INTO things DEFAULT VALUES RETURNING id`).Scan(&id); err != nil {
		return idem.Response{}, fmt.Errorf("insert thing: %w", err)
	}
	return idem.JSON(http.StatusCreated, map[string]int{"id": id})
}

func writeProblem(w http.ResponseWriter, status int, slug string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"type": "/problems/" + slug, "status": status}) //nolint:errcheck // a test's recorder
}

var errApp = errors.New("the application's own failure")

var conformanceCases = []conformanceCase{
	{name: "work done", status: http.StatusCreated, rows: 1, stored: true,
		handler: func(w http.ResponseWriter, r *http.Request, do func(idem.Work) error, lock *idem.Lock) error {
			return do(insert)
		}},
	{name: "writes nothing", status: http.StatusInternalServerError, problem: "no-response",
		handler: func(http.ResponseWriter, *http.Request, func(idem.Work) error, *idem.Lock) error { return nil }},
	{name: "panics", panics: true,
		handler: func(http.ResponseWriter, *http.Request, func(idem.Work) error, *idem.Lock) error {
			panic("the handler's bug")
		}},
	{name: "work fails", status: http.StatusInternalServerError, logged: true,
		handler: func(w http.ResponseWriter, r *http.Request, do func(idem.Work) error, lock *idem.Lock) error {
			return do(func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
				if _, err := insert(ctx, tx); err != nil {
					return idem.Response{}, err
				}
				return idem.Response{}, errApp
			})
		}},
	{name: "returns an error before the work", status: http.StatusInternalServerError, logged: true,
		handler: func(http.ResponseWriter, *http.Request, func(idem.Work) error, *idem.Lock) error { return errApp }},
	// Stripe's rule: a request refused before it began (failed validation)
	// stores nothing, so the corrected body under the same key runs.
	{name: "refuses before the work", status: http.StatusBadRequest, problem: "invalid-request",
		handler: func(w http.ResponseWriter, _ *http.Request, _ func(idem.Work) error, _ *idem.Lock) error {
			writeProblem(w, http.StatusBadRequest, "invalid-request")
			return nil
		}},
	{name: "answers 200 without the work", status: http.StatusOK,
		handler: func(w http.ResponseWriter, _ *http.Request, _ func(idem.Work) error, _ *idem.Lock) error {
			w.WriteHeader(http.StatusOK)
			return nil
		}},
	// Work that failed wrote nothing and freed the key (Lock.Do): the
	// handler's answer to it is not the key's either.
	{name: "refuses after its work failed", status: http.StatusConflict, problem: "slot-taken",
		handler: func(w http.ResponseWriter, _ *http.Request, do func(idem.Work) error, _ *idem.Lock) error {
			if err := do(func(context.Context, pgx.Tx) (idem.Response, error) { return idem.Response{}, errApp }); err != nil {
				writeProblem(w, http.StatusConflict, "slot-taken")
			}
			return nil
		}},
	// A Scope that refuses the request says how, with a status of its
	// own (default 401), as problem+json; nothing is claimed.
	{name: "scope refuses", status: http.StatusUnauthorized, problem: "unauthorized",
		scope:   func(*http.Request) (string, error) { return "", &idem.ScopeError{Err: errApp} },
		handler: func(http.ResponseWriter, *http.Request, func(idem.Work) error, *idem.Lock) error { return nil }},
	{name: "scope refuses with 403", status: http.StatusForbidden, problem: "forbidden",
		scope: func(*http.Request) (string, error) {
			return "", &idem.ScopeError{Status: http.StatusForbidden, Detail: "this account may not send transfers"}
		},
		handler: func(http.ResponseWriter, *http.Request, func(idem.Work) error, *idem.Lock) error { return nil }},
	{name: "scope fails", status: http.StatusInternalServerError, logged: true,
		scope:   func(*http.Request) (string, error) { return "", errApp },
		handler: func(http.ResponseWriter, *http.Request, func(idem.Work) error, *idem.Lock) error { return nil }},
	// A key released by hand is free: the answer is the handler's, not a
	// 409 "superseded" about a newer request there is none of.
	{name: "releases the key by hand, then refuses", status: http.StatusBadRequest, problem: "invalid-request",
		handler: func(w http.ResponseWriter, r *http.Request, _ func(idem.Work) error, lock *idem.Lock) error {
			if err := lock.Release(r.Context()); err != nil {
				return err
			}
			writeProblem(w, http.StatusBadRequest, "invalid-request")
			return nil
		}},
}

// Conformance runs the kit's promise through adapter a: a handler that
// writes nothing, returns an error, panics, or is refused before its work
// began frees the key with a real answer (never a panic, never a stored
// refusal), and only the work's answer is the key's; a JSON route reads
// its body and replays its answer; a finish whose COMMIT fails is answered
// 503 and frees the key; a form's key minted at render runs its work once,
// and the form's refusals and status route are the same on every adapter.
// The subtests share a database of their own (NewPool).
func Conformance(t *testing.T, a Adapter) {
	t.Helper()
	pool := NewPool(t)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE things (id serial PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	store := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	t.Run(a.Name+"/a JSON route", func(t *testing.T) { jsonRoute(t, a, store) })
	t.Run(a.Name+"/a finish that does not commit", func(t *testing.T) { notCommitted(t, a, pool, store) })
	formConformance(t, a, store)
	for i, tc := range conformanceCases {
		t.Run(a.Name+"/"+tc.name, func(t *testing.T) {
			key := fmt.Sprintf("conformance-%d", i)
			scope := func(r *http.Request) (string, error) {
				if tc.scope != nil && r.Header.Get("X-Retry") == "" {
					return tc.scope(r)
				}
				return "alice", nil
			}
			var log bytes.Buffer
			srv := a.Protect(store, scope, slog.New(slog.NewTextHandler(&log, nil)), func(w http.ResponseWriter, r *http.Request, do func(idem.Work) error, lock *idem.Lock) error {
				if r.Header.Get("X-Retry") != "" {
					return do(insert) // the corrected request, served the good way
				}
				return tc.handler(w, r, do, lock)
			})
			before := countThings(t, pool)
			first, panicked := sendThing(srv, key, `{"n":1}`, false)
			if panicked != tc.panics {
				t.Fatalf("panicked: got %v, want %v", panicked, tc.panics)
			}
			if !tc.panics {
				if first.Code != tc.status {
					t.Fatalf("first: got %d %s, want %d", first.Code, first.Body, tc.status)
				}
				if got := problemSlug(first); tc.problem != "" && got != tc.problem {
					t.Fatalf("first: got problem %q (%s), want %q", got, first.Body, tc.problem)
				}
			}
			if logged := log.Len() > 0; logged != tc.logged {
				t.Fatalf("logged: got %v (%q), want %v", logged, log.String(), tc.logged)
			}
			if got := countThings(t, pool) - before; got != tc.rows {
				t.Fatalf("rows written by the first request: got %d, want %d", got, tc.rows)
			}
			if tc.stored {
				again, _ := sendThing(srv, key, `{"n":1}`, true)
				if again.Code != first.Code || again.Body.String() != first.Body.String() || again.Header().Get(idem.HeaderReplayed) != "true" {
					t.Fatalf("the retry: got %d %s %v, want the first answer replayed", again.Code, again.Body, again.Header())
				}
				return
			}
			if _, err := store.Get(t.Context(), "alice", key); !errors.Is(err, idem.ErrNotFound) {
				t.Fatalf("the key after the first request: got %v, want it free (idem.ErrNotFound)", err)
			}
			// The key is free: the corrected request (another body) runs.
			retry, _ := sendThing(srv, key, `{"n":2}`, true)
			if retry.Code != http.StatusCreated || retry.Header().Get(idem.HeaderReplayed) != "" {
				t.Fatalf("the corrected request with the key: got %d %s, want a fresh 201 (the key freed)", retry.Code, retry.Body)
			}
		})
	}
}

func sendThing(h http.Handler, key, body string, retry bool) (rec *httptest.ResponseRecorder, panicked bool) {
	req := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	if retry {
		req.Header.Set("X-Retry", "1")
	}
	rec = httptest.NewRecorder()
	defer func() {
		// As a server's recovery would: the panic is the handler's own.
		if recover() != nil {
			panicked = true
		}
	}()
	h.ServeHTTP(rec, req)
	return rec, false
}

func problemSlug(rec *httptest.ResponseRecorder) string { return problemOf(rec.Body.String()) }

func countThings(tb testing.TB, pool *pgxpool.Pool) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM things`).Scan(&n); err != nil {
		tb.Fatalf("count things: %v", err)
	}
	return n
}
