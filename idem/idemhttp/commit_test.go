package idemhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/idem/idemtest"
)

// refusedAtCommit is a note whose deferred constraint trigger fails the
// transaction at COMMIT, after every statement in it (the finish too) went
// through.
const refusedAtCommit = "refused at commit"

// notesFailingAtCommit is a database with a notes table that refuses, at
// COMMIT, a note whose body is refusedAtCommit.
func notesFailingAtCommit(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := idemtest.NewPool(t)
	_, err := pool.Exec(context.Background(), `
CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL);
CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.body = '`+refusedAtCommit+`' THEN
        RAISE EXCEPTION 'refused at commit' USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON notes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();`)
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

type answer struct {
	status int
	header http.Header
	body   string
}

func send(t *testing.T, url, key string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v (the server sent no answer)", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func problemType(a answer) string {
	var p struct{ Type string }
	json.Unmarshal([]byte(a.body), &p) //nolint:errcheck // an empty type is the failure
	return p.Type
}

// A write whose COMMIT fails after the key was finished in its transaction
// stored nothing: the client is told 503 with Retry-After (never a 500 or no
// answer at all), the key is not finished, and the retry runs the handler
// again. Both ways of finishing in a transaction: Handle (the kit's
// transaction) and a handler under Middleware that commits its own
// (FinishTx).
func TestAFinishThatDoesNotCommitIsAnswered503(t *testing.T) {
	pool := notesFailingAtCommit(t)
	store := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	keys := idemhttp.New(idemhttp.Options{Store: store, Scope: func(*http.Request) (string, error) { return "alice", nil }})
	var failing atomic.Bool
	insert := func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		body := "ok"
		if failing.Load() {
			body = refusedAtCommit
		}
		if _, err := tx.Exec(ctx, `INSERT INTO notes (body) VALUES ($1)`, body); err != nil {
			return idem.Response{}, err
		}
		return idem.JSON(http.StatusCreated, map[string]string{"body": body})
	}
	mux := http.NewServeMux()
	mux.Handle("POST /handle", keys.Handle(insert))
	mux.Handle("POST /own", keys.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var resp idem.Response
		err := pgx.BeginFunc(r.Context(), pool, func(tx pgx.Tx) error {
			var err error
			if resp, err = insert(r.Context(), tx); err != nil {
				return err
			}
			return idemhttp.LockOf(r.Context()).FinishTx(r.Context(), tx, resp)
		})
		if err != nil {
			idemhttp.WriteError(w, r, err)
			return
		}
		idemhttp.Write(w, idem.Outcome{Response: resp})
	})))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, route := range []string{"/handle", "/own"} {
		t.Run(route, func(t *testing.T) {
			failing.Store(true)
			got := send(t, srv.URL+route, route)
			if got.status != http.StatusServiceUnavailable || got.header.Get("Retry-After") == "" ||
				problemType(got) != "/problems/not-committed" {
				t.Fatalf("got %d %s (Retry-After %q), want 503 not-committed with Retry-After", got.status, got.body, got.header.Get("Retry-After"))
			}
			if _, err := store.Get(t.Context(), "alice", route); !errors.Is(err, idem.ErrNotFound) {
				t.Fatalf("the key after the failed commit: got %v, want it free (idem.ErrNotFound)", err)
			}
			failing.Store(false)
			if got := send(t, srv.URL+route, route); got.status != http.StatusCreated || got.header.Get(idem.HeaderReplayed) != "" {
				t.Fatalf("the retry: got %d %s, want a fresh 201", got.status, got.body)
			}
		})
	}
}

// A handler under Middleware that writes nothing at all frees the key, and
// its client is answered 500 no-response (the key is free, a retry is
// safe), not left without an answer by a panic.
func TestAHandlerThatWritesNothingFreesTheKeyAndIsAnswered(t *testing.T) {
	pool := idemtest.NewPool(t)
	store := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	keys := idemhttp.New(idemhttp.Options{Store: store, Scope: func(*http.Request) (string, error) { return "alice", nil }})
	var silent atomic.Bool
	silent.Store(true)
	srv := httptest.NewServer(keys.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !silent.Load() {
			w.WriteHeader(http.StatusCreated)
		}
	})))
	defer srv.Close()
	got := send(t, srv.URL, "s1")
	if got.status != http.StatusInternalServerError || problemType(got) != "/problems/no-response" {
		t.Fatalf("got %d %s, want 500 no-response", got.status, got.body)
	}
	if _, err := store.Get(t.Context(), "alice", "s1"); !errors.Is(err, idem.ErrNotFound) {
		t.Fatalf("the key: got %v, want it free (idem.ErrNotFound)", err)
	}
	silent.Store(false)
	if got := send(t, srv.URL, "s1"); got.status != http.StatusCreated {
		t.Fatalf("the retry: got %d %s, want 201", got.status, got.body)
	}
}
