package idemtest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem"
)

// jsonRoute is a JSON route through a's middleware: the handler decodes the
// body the middleware read for the fingerprint and put back, and writes
// with Do; a retry with the same body spelt otherwise gets the first answer
// replayed without running again, another body with the key is refused 422,
// and a body over MaxBody (the default, 1 MiB) 413.
func jsonRoute(t *testing.T, a Adapter, store *idem.Store) {
	var runs atomic.Int32
	alice := func(*http.Request) (string, error) { return "alice", nil }
	srv := a.Protect(store, alice, slog.New(slog.DiscardHandler), func(w http.ResponseWriter, r *http.Request, do func(idem.Work) error, _ *idem.Lock) error {
		var in struct{ A int }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			return fmt.Errorf("decode note: %w", err)
		}
		run := runs.Add(1)
		return do(func(context.Context, pgx.Tx) (idem.Response, error) {
			return idem.JSON(http.StatusCreated, map[string]int{"run": int(run), "a": in.A})
		})
	})
	send := func(key, body string) *httptest.ResponseRecorder {
		rec, _ := sendThing(srv, key, body, false)
		return rec
	}
	first, again := send("json-1", `{"a":1}`), send("json-1", `{ "a": 1 }`)
	if first.Code != http.StatusCreated || first.Header().Get(idem.HeaderReplayed) != "" || !strings.Contains(first.Body.String(), `"a":1`) {
		t.Fatalf("first: got %d %s %v, want a fresh 201 with the body's a", first.Code, first.Body, first.Header())
	}
	if again.Code != http.StatusCreated || again.Body.String() != first.Body.String() || again.Header().Get(idem.HeaderReplayed) != "true" || runs.Load() != 1 {
		t.Fatalf("again: got %d %q %v after %d runs, want the first answer replayed after 1", again.Code, again.Body, again.Header(), runs.Load())
	}
	for _, tc := range []struct {
		name, key, body string
		want            int
		problem         string
	}{
		{"another body with the key", "json-1", `{"a":2}`, http.StatusUnprocessableEntity, "idempotency-key-reused"},
		{"a body over MaxBody", "json-2", `{"a":"` + strings.Repeat("x", 1<<20) + `"}`, http.StatusRequestEntityTooLarge, "body-too-large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := send(tc.key, tc.body); got.Code != tc.want || problemSlug(got) != tc.problem {
				t.Fatalf("got %d %.200s, want %d %s", got.Code, got.Body, tc.want, tc.problem)
			}
		})
	}
}
