package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/idem/idemtest"
)

// The example end to end: a real PostgreSQL (TEST_DATABASE_URL names
// its server; see idem/README.md, Tests) and a real HTTP server.

func TestMain(m *testing.M) { idemtest.Main(m) }

// A duplicate sent while the original runs waits for it (the kit's default
// wait) and gets its answer, marked as a replay; the original's is not.
func TestDuplicateWaitsForTheOriginal(t *testing.T) {
	app := start(t)
	// The transfers table is locked, so the first request to claim the key
	// holds it, in its INSERT, until the other has arrived.
	release := app.lockTransfers()
	answers := make([]answer, 2)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = app.post("alice", `"t-1"`, `{"to": "bob", "amount": 20}`) })
	}
	app.waitForBlockedInsert()
	time.Sleep(100 * time.Millisecond) // margin for the duplicate to reach the server
	release()
	wg.Wait()

	replayed := 0
	for _, a := range answers {
		if a.StatusCode != http.StatusCreated || a.Body != answers[0].Body || a.Header.Get("Location") == "" {
			t.Fatalf("got %d %s and %d %s, want the same 201 with a Location for both",
				answers[0].StatusCode, answers[0].Body, answers[1].StatusCode, answers[1].Body)
		}
		if a.Header.Get(idem.HeaderReplayed) == "true" {
			replayed++
		}
	}
	if replayed != 1 {
		t.Errorf("got %d answers marked %s: true, want 1 (the duplicate's)", replayed, idem.HeaderReplayed)
	}
	if n := app.transfers(); n != 1 {
		t.Fatalf("got %d transfers, want 1", n)
	}
}

// A retry gets the first answer, replayed, whatever the spacing and order
// of its JSON; the key with another body is refused; a key whose request
// the handler refused is free for the corrected one; the same key from
// another account is another operation.
func TestRetries(t *testing.T) {
	app := start(t)
	first := app.post("alice", `"t-1"`, `{"to": "bob", "amount": 20}`)
	if first.StatusCode != http.StatusCreated || first.Header.Get(idem.HeaderReplayed) != "" {
		t.Fatalf("first: got %d %s %v, want a 201 not marked as a replay", first.StatusCode, first.Body, first.Header)
	}
	retry := app.post("alice", `"t-1"`, `{"amount":20,"to":"bob"}`)
	if retry.StatusCode != http.StatusCreated || retry.Body != first.Body || retry.Header.Get(idem.HeaderReplayed) != "true" {
		t.Fatalf("retry: got %d %s %v, want the first answer, marked as a replay", retry.StatusCode, retry.Body, retry.Header)
	}
	for _, tc := range []struct {
		name, account, key, body string
		want                     int
		problem                  string
	}{
		{"another amount with the key", "alice", `"t-1"`, `{"to": "bob", "amount": 30}`, http.StatusUnprocessableEntity, "/problems/idempotency-key-reused"},
		{"no key", "alice", ``, `{"to": "bob", "amount": 30}`, http.StatusBadRequest, "/problems/missing-idempotency-key"},
		{"no amount, refused by the handler", "alice", `"t-2"`, `{"to": "bob"}`, http.StatusBadRequest, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := app.post(tc.account, tc.key, tc.body)
			var p struct{ Type string }
			json.Unmarshal([]byte(got.Body), &p) //nolint:errcheck // checked below
			if got.StatusCode != tc.want || p.Type != tc.problem {
				t.Fatalf("got %d %s, want %d %s", got.StatusCode, got.Body, tc.want, tc.problem)
			}
		})
	}
	if n := app.transfers(); n != 1 {
		t.Fatalf("got %d transfers, want 1", n)
	}
	if corrected := app.post("alice", `"t-2"`, `{"to": "bob", "amount": 5}`); corrected.StatusCode != http.StatusCreated {
		t.Fatalf("the corrected request with the refused one's key: got %d %s, want 201", corrected.StatusCode, corrected.Body)
	}
	if other := app.post("carol", `"t-1"`, `{"to": "bob", "amount": 30}`); other.StatusCode != http.StatusCreated || other.Header.Get(idem.HeaderReplayed) != "" {
		t.Fatalf("carol's t-1: got %d %s, want a fresh 201", other.StatusCode, other.Body)
	}
	if got := app.get("alice", first.Header.Get("Location")); !strings.Contains(got, `"to":"bob","amount":20`) {
		t.Errorf("GET the Location: got %s, want bob and 20", got)
	}
}

// A request that died holding its key (the process was killed before its
// transaction committed) leaves the key started: the maintenance's
// completer releases it, and the client's retry makes the transfer.
func TestMaintenanceSettlesAStuckKey(t *testing.T) {
	app := start(t)
	// The dead attempt: a claim of the key whose lease then runs out, with
	// nobody left to finish or release it.
	if _, err := app.keys.Claim(t.Context(), idem.Request{Scope: "alice", Key: "t-1", Fingerprint: []byte("the dead attempt's")}); err != nil {
		t.Fatal(err)
	}
	idemtest.ExpireLock(t, app.pool, "alice", "t-1")
	err := idem.Poll(ctxWithin(t, 10*time.Second), func(ctx context.Context) (bool, error) {
		_, err := app.keys.Get(ctx, "alice", "t-1")
		return errors.Is(err, idem.ErrNotFound), nil
	})
	if err != nil {
		t.Fatalf("the stuck key was not released by the maintenance: %v", err)
	}
	retry := app.post("alice", `"t-1"`, `{"to": "bob", "amount": 20}`)
	if retry.StatusCode != http.StatusCreated || retry.Header.Get(idem.HeaderReplayed) != "" {
		t.Fatalf("after the release: got %d %s, want a fresh 201", retry.StatusCode, retry.Body)
	}
	if n := app.transfers(); n != 1 {
		t.Fatalf("got %d transfers, want 1", n)
	}
}

type app struct {
	t    *testing.T
	url  string
	pool *pgxpool.Pool
	keys *idem.Store
}

// start runs the example as run does, on a database of the test's own, with
// the maintenance's passes a few milliseconds apart instead of seconds.
func start(t *testing.T) *app {
	t.Helper()
	pool := idemtest.NewPool(t)
	if err := migrate(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	keys := idem.NewStore(pool, idem.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	maintained := make(chan struct{})
	go func() {
		idem.Maintain(ctx, idem.Maintenance{Store: keys, Grace: time.Millisecond, CompleteEvery: 20 * time.Millisecond})
		close(maintained)
	}()
	t.Cleanup(func() { cancel(); <-maintained })
	ts := httptest.NewServer(newServer(pool, keys))
	t.Cleanup(ts.Close)
	return &app{t: t, url: ts.URL, pool: pool, keys: keys}
}

// answer is a response as the tests look at it.
type answer struct {
	StatusCode int
	Header     http.Header
	Body       string
}

func (a *app) post(account, key, body string) answer {
	req, _ := http.NewRequest(http.MethodPost, a.url+"/transfers", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+account)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return a.do(req)
}

func (a *app) get(account, path string) string {
	req, _ := http.NewRequest(http.MethodGet, a.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+account)
	return a.do(req).Body
}

func (a *app) do(req *http.Request) answer {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Error(err) // not Fatal: requests run in goroutines too
		return answer{Header: http.Header{}}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, strings.TrimSpace(string(body))}
}

func (a *app) transfers() int {
	a.t.Helper()
	var n int
	if err := a.pool.QueryRow(context.Background(), `SELECT count(*) FROM transfers`).Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}

// lockTransfers holds a lock on transfers that makes every INSERT wait
// until release is called.
func (a *app) lockTransfers() (release func()) {
	a.t.Helper()
	tx, err := a.pool.Begin(context.Background())
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), `LOCK TABLE transfers IN SHARE MODE`); err != nil {
		a.t.Fatal(err)
	}
	return func() { tx.Rollback(context.Background()) } //nolint:errcheck // releasing the lock is all it is for
}

// waitForBlockedInsert waits until a session waits for the lock.
func (a *app) waitForBlockedInsert() {
	a.t.Helper()
	err := idem.Poll(ctxWithin(a.t, 10*time.Second), func(ctx context.Context) (bool, error) {
		var n int
		err := a.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'transfers'::regclass`).Scan(&n)
		return n > 0, err
	})
	if err != nil {
		a.t.Fatalf("no request got to its INSERT: %v", err)
	}
}

func ctxWithin(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
