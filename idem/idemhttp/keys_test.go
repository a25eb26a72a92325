package idemhttp_test

import (
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
	"exactlyonce/idem/idemtest"
)

// notesAPI serves POST /notes on a ServeMux with Keys.Handle: its work
// inserts a note and answers 201 with it.
func notesAPI(t *testing.T) (http.Handler, *pgxpool.Pool, *idem.Store) {
	t.Helper()
	pool := idemtest.NewPool(t)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	store := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	keys := idemhttp.New(idemhttp.Options{Store: store,
		Scope: func(r *http.Request) (string, error) { return r.Header.Get("X-Client"), nil }})
	mux := http.NewServeMux()
	mux.Handle("POST /notes", keys.Handle(func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		var id int
		if err := tx.QueryRow(ctx, `INSERT INTO notes (body) VALUES ('x') RETURNING id`).Scan(&id); err != nil {
			return idem.Response{}, err
		}
		resp, err := idem.JSON(http.StatusCreated, map[string]int{"id": id})
		resp.Header["Location"] = fmt.Sprintf("/notes/%d", id)
		return resp, err
	}))
	return mux, pool, store
}

func post(h http.Handler, key, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/notes", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Client", "alice")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func count(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM notes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHandle(t *testing.T) {
	h, pool, _ := notesAPI(t)
	first := post(h, `"n1"`, `{"a": 1, "b": 2}`)
	if first.Code != http.StatusCreated || first.Header().Get(idem.HeaderReplayed) != "" || first.Header().Get("Location") == "" {
		t.Fatalf("first: got %d %v, want a fresh 201 with its Location", first.Code, first.Header())
	}
	again := post(h, `"n1"`, `{"b":2,"a":1}`)
	if again.Code != http.StatusCreated || again.Body.String() != first.Body.String() ||
		again.Header().Get("Location") != first.Header().Get("Location") || again.Header().Get(idem.HeaderReplayed) != "true" {
		t.Fatalf("a retry with the same body spelt otherwise: got %d %q %v, want the first answer replayed", again.Code, again.Body, again.Header())
	}
	for _, tc := range []struct {
		name, key, body string
		want            int
		slug            string
	}{
		{"another body with the key", `"n1"`, `{"a":2}`, http.StatusUnprocessableEntity, "idempotency-key-reused"},
		{"no key", ``, `{}`, http.StatusBadRequest, "missing-idempotency-key"},
		{"a key with parameters", `"n2";x=1`, `{}`, http.StatusBadRequest, "invalid-idempotency-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := post(h, tc.key, tc.body)
			var p struct{ Type string }
			json.Unmarshal(got.Body.Bytes(), &p) //nolint:errcheck // checked below
			if got.Code != tc.want || p.Type != "/problems/"+tc.slug || got.Header().Get("Content-Type") != "application/problem+json" {
				t.Fatalf("got %d %s, want %d %s as problem+json", got.Code, got.Body, tc.want, tc.slug)
			}
		})
	}
	if n := count(t, pool); n != 1 {
		t.Fatalf("got %d notes, want 1", n)
	}
}

// The answer is sent only once it is stored: when another attempt took the
// key over while the handler ran, the client is told 409, not an answer its
// retry would not get.
func TestMiddlewareDoesNotSendAnAnswerItCouldNotStore(t *testing.T) {
	pool := idemtest.NewPool(t)
	store := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	keys := idemhttp.New(idemhttp.Options{Store: store, Scope: func(*http.Request) (string, error) { return "alice", nil }})
	mux := http.NewServeMux()
	mux.Handle("POST /slow", keys.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		idemtest.ExpireLock(t, pool, "alice", "k")
		if _, err := store.Claim(context.Background(), idem.Request{Scope: "alice", Key: "k",
			Fingerprint: idem.Fingerprint([]byte(http.MethodPost), []byte("POST /slow"), []byte(`{}`))}); err != nil {
			t.Errorf("the retry's takeover: %v", err)
		}
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":1}`))
	})))
	req := httptest.NewRequest(http.MethodPost, "/slow", strings.NewReader(`{}`))
	req.Header.Set("Idempotency-Key", "k")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "request-superseded") {
		t.Fatalf("got %d %q, want 409 request-superseded", rec.Code, rec.Body)
	}
}

// A duplicate arriving while the first runs waits for it (the default wait)
// and gets its answer, replayed; with no wait it is answered 409 at once,
// with a short Retry-After.
func TestDuplicateWaitsForTheFirst(t *testing.T) {
	pool := idemtest.NewPool(t)
	store := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	entered, release := make(chan struct{}, 2), make(chan struct{})
	serve := func(wait time.Duration) http.Handler {
		keys := idemhttp.New(idemhttp.Options{Store: store, Wait: wait, Scope: func(*http.Request) (string, error) { return "alice", nil }})
		mux := http.NewServeMux()
		mux.Handle("POST /slow", keys.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-release
			// Only the work's answer is the key's (Do), not one the
			// handler writes by itself.
			if err := idemhttp.Do(w, r, func(context.Context, pgx.Tx) (idem.Response, error) {
				return idem.Response{Status: http.StatusNoContent}, nil
			}); err != nil {
				idemhttp.WriteError(w, r, err)
			}
		})))
		return mux
	}
	send := func(h http.Handler, key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/slow", strings.NewReader(`{}`))
		req.Header.Set("Idempotency-Key", key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	waiting, now := serve(0), serve(-1)
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- send(waiting, "k") }()
	<-entered
	if got := send(now, "k"); got.Code != http.StatusConflict || got.Header().Get("Retry-After") == "" {
		t.Fatalf("a duplicate with no wait: got %d (Retry-After %q), want 409 with Retry-After", got.Code, got.Header().Get("Retry-After"))
	}
	second := make(chan *httptest.ResponseRecorder)
	go func() { second <- send(waiting, "k") }()
	time.Sleep(50 * time.Millisecond) // the second is now waiting (or about to)
	close(release)
	if got := <-first; got.Code != http.StatusNoContent || got.Header().Get(idem.HeaderReplayed) != "" {
		t.Fatalf("first: got %d %v, want a fresh 204", got.Code, got.Header())
	}
	if got := <-second; got.Code != http.StatusNoContent || got.Header().Get(idem.HeaderReplayed) != "true" {
		t.Fatalf("the waiting duplicate: got %d %v, want the first's 204, replayed", got.Code, got.Header())
	}
}

// Do is the write of a handler under Middleware that reads its request: the
// note's text comes from the body, which Middleware read for the
// fingerprint and put back. A request that holds no key runs nothing.
func TestDoReadsTheRequest(t *testing.T) {
	pool := idemtest.NewPool(t)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	keys := idemhttp.New(idemhttp.Options{Store: idem.NewStore(pool, idem.Options{}), Optional: true,
		Scope: func(r *http.Request) (string, error) { return r.Header.Get("X-Client"), nil }})
	mux := http.NewServeMux()
	mux.Handle("POST /notes", keys.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Body string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
			http.Error(w, "a note needs a body", http.StatusBadRequest)
			return
		}
		err := idemhttp.Do(w, r, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			var id int
			if err := tx.QueryRow(ctx, `INSERT INTO notes (body) VALUES ($1) RETURNING id`, in.Body).Scan(&id); err != nil {
				return idem.Response{}, err
			}
			return idem.JSON(http.StatusCreated, map[string]any{"id": id, "body": in.Body})
		})
		if err != nil {
			idemhttp.WriteError(w, r, err)
		}
	})))
	if got := post(mux, `"d0"`, `{}`); got.Code != http.StatusBadRequest {
		t.Fatalf("a note without a body: got %d %s, want 400", got.Code, got.Body)
	}
	first := post(mux, `"d1"`, `{"body":"milk"}`)
	if first.Code != http.StatusCreated || first.Header().Get(idem.HeaderReplayed) != "" || !strings.Contains(first.Body.String(), `"milk"`) {
		t.Fatalf("first: got %d %s %v, want a fresh 201 with its body", first.Code, first.Body, first.Header())
	}
	if again := post(mux, `"d1"`, `{"body":"milk"}`); again.Body.String() != first.Body.String() || again.Header().Get(idem.HeaderReplayed) != "true" {
		t.Fatalf("a retry: got %d %s %v, want the first answer, replayed", again.Code, again.Body, again.Header())
	}
	if got := post(mux, `"d1"`, `{"body":"eggs"}`); got.Code != http.StatusUnprocessableEntity {
		t.Fatalf("another body with the key: got %d, want 422", got.Code)
	}
	if got := post(mux, ``, `{"body":"eggs"}`); got.Code != http.StatusBadRequest || !strings.Contains(got.Body.String(), "missing-idempotency-key") {
		t.Fatalf("no key on an Optional route: got %d %s, want 400 missing-idempotency-key", got.Code, got.Body)
	}
	if n := count(t, pool); n != 1 {
		t.Fatalf("got %d notes, want 1", n)
	}
}

// Func answers a handler's returned error as the kit's own are: Do's
// refusal (another body under the key) as problem+json, the work's own
// error logged and answered 500, and either frees the key for the retry.
func TestFuncAnswersReturnedErrors(t *testing.T) {
	pool := idemtest.NewPool(t)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	keys := idemhttp.New(idemhttp.Options{Store: idem.NewStore(pool, idem.Options{}),
		Scope: func(r *http.Request) (string, error) { return r.Header.Get("X-Client"), nil },
		Log:   slog.New(slog.NewTextHandler(&logged, nil))})
	broken := true
	mux := http.NewServeMux()
	mux.Handle("POST /notes", keys.Func(func(w http.ResponseWriter, r *http.Request) error {
		var in struct{ Body string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		return idemhttp.Do(w, r, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
			if broken {
				return idem.Response{}, errors.New("the work's own failure")
			}
			var id int
			if err := tx.QueryRow(ctx, `INSERT INTO notes (body) VALUES ($1) RETURNING id`, in.Body).Scan(&id); err != nil {
				return idem.Response{}, err
			}
			return idem.Created(fmt.Sprintf("/notes/%d", id), map[string]any{"id": id})
		})
	}))
	got := post(mux, `"f1"`, `{"body":"milk"}`)
	if got.Code != http.StatusInternalServerError || got.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("a work that fails: got %d %q %s, want a 500 problem+json", got.Code, got.Header().Get("Content-Type"), got.Body)
	}
	if !strings.Contains(logged.String(), "the work's own failure") {
		t.Errorf("the work's failure was not logged: %q", logged.String())
	}
	broken = false
	if got := post(mux, `"f1"`, `{"body":"milk"}`); got.Code != http.StatusCreated || got.Header().Get("Location") == "" {
		t.Fatalf("the retry: got %d %v, want a fresh 201 with a Location", got.Code, got.Header())
	}
	got = post(mux, `"f1"`, `{"body":"eggs"}`)
	if got.Code != http.StatusUnprocessableEntity || !strings.Contains(got.Body.String(), "idempotency-key-reused") {
		t.Fatalf("another body under the key: got %d %s, want 422 problem+json", got.Code, got.Body)
	}
	if strings.Contains(logged.String(), "reused") {
		t.Errorf("a refusal was logged as a failure: %q", logged.String())
	}
	if n := count(t, pool); n != 1 {
		t.Fatalf("got %d notes, want 1", n)
	}
}

// A handler that panics frees its key, as one that answers 5xx does: the
// retry runs it again instead of waiting for a lease nobody renews.
func TestMiddlewareFreesTheKeyOfAPanic(t *testing.T) {
	pool := idemtest.NewPool(t)
	store := idem.NewStore(pool, idem.Options{})
	keys := idemhttp.New(idemhttp.Options{Store: store, Scope: func(*http.Request) (string, error) { return "alice", nil }})
	panics := true
	mux := http.NewServeMux()
	mux.Handle("POST /notes", keys.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if panics {
			panic("the handler's bug")
		}
		w.WriteHeader(http.StatusCreated)
	})))
	func() {
		defer func() {
			if p := recover(); p != "the handler's bug" {
				t.Errorf("got the panic %v, want the handler's, passed on", p)
			}
		}()
		post(mux, `"p1"`, `{}`)
	}()
	if _, err := store.Get(t.Context(), "alice", "p1"); !errors.Is(err, idem.ErrNotFound) {
		t.Fatalf("the key after the panic: got %v, want it released (idem.ErrNotFound)", err)
	}
	panics = false
	if got := post(mux, `"p1"`, `{}`); got.Code != http.StatusCreated || got.Header().Get(idem.HeaderReplayed) != "" {
		t.Fatalf("the retry: got %d %v, want a fresh 201", got.Code, got.Header())
	}
}
