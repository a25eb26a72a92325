package idemtest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
)

// refusedAtCommit is a note whose deferred constraint trigger fails the
// transaction at COMMIT, after every statement in it (the finish too) went
// through.
const refusedAtCommit = "refused at commit"

const notesFailingAtCommit = `
CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL);
CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.body = '` + refusedAtCommit + `' THEN
        RAISE EXCEPTION 'refused at commit' USING ERRCODE = '23514';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON notes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();`

// notCommitted: a write whose COMMIT fails after the key was finished in its
// transaction stored nothing. The client is told 503 not-committed with
// Retry-After (never a 500, never no answer: a real server in between), the
// key is free, and the retry runs afresh. Every way of finishing in a
// transaction: Do and Handle (the kit's transaction), and a handler that
// commits its own (Lock.FinishTx).
func notCommitted(t *testing.T, a Adapter, pool *pgxpool.Pool, store *idem.Store) {
	if _, err := pool.Exec(context.Background(), notesFailingAtCommit); err != nil {
		t.Fatal(err)
	}
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
	alice := func(*http.Request) (string, error) { return "alice", nil }
	log := slog.New(slog.DiscardHandler)
	for _, route := range []struct {
		name string
		h    http.Handler
	}{
		{"Do", a.Protect(store, alice, log, func(_ http.ResponseWriter, _ *http.Request, do func(idem.Work) error, _ *idem.Lock) error {
			return do(insert)
		})},
		{"Handle", a.Handle(store, alice, insert)},
		{"FinishTx", a.Protect(store, alice, log, func(w http.ResponseWriter, r *http.Request, _ func(idem.Work) error, lock *idem.Lock) error {
			ctx := r.Context()
			var resp idem.Response
			err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				var err error
				if resp, err = insert(ctx, tx); err != nil {
					return err
				}
				return lock.FinishTx(ctx, tx, resp)
			})
			if err != nil {
				return err
			}
			for k, v := range resp.Header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(resp.Status)
			_, err = w.Write(resp.Body)
			return err
		})},
	} {
		t.Run(route.name, func(t *testing.T) {
			srv := httptest.NewServer(route.h)
			defer srv.Close()
			key := "commit-" + route.name
			failing.Store(true)
			status, header, body := post(t, srv.URL+"/things", key)
			if status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" || problemOf(body) != "not-committed" {
				t.Fatalf("got %d %s (Retry-After %q), want 503 not-committed with Retry-After", status, body, header.Get("Retry-After"))
			}
			if _, err := store.Get(t.Context(), "alice", key); !errors.Is(err, idem.ErrNotFound) {
				t.Fatalf("the key after the failed commit: got %v, want it free (idem.ErrNotFound)", err)
			}
			failing.Store(false)
			if status, header, body := post(t, srv.URL+"/things", key); status != http.StatusCreated || header.Get(idem.HeaderReplayed) != "" {
				t.Fatalf("the retry: got %d %s, want a fresh 201", status, body)
			}
		})
	}
}

// post sends an empty JSON body with key over HTTP.
func post(t *testing.T, url, key string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v (the server sent no answer)", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: read the answer: %v", url, err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// problemOf is the slug of a problem+json body's type.
func problemOf(body string) string {
	var p struct{ Type string }
	json.Unmarshal([]byte(body), &p) //nolint:errcheck // an empty type is the failure
	return strings.TrimPrefix(p.Type, "/problems/")
}
