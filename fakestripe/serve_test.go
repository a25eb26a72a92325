package fakestripe_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"exactlyonce/fakestripe"
)

// testSecret is the fake's secret key in these tests.
const testSecret = "sk_test_refunds"

// fake is a fake Stripe served over real HTTP for one test, with the
// events it sends caught.
type fake struct {
	*fakestripe.Provider
	url   string
	hooks *hookSink
	// keys prefixes the test's idempotency keys: the tests share the
	// database, and keys are the account's.
	keys string
}

// eachStore runs test as a parallel subtest against each store: in
// memory, and in PostgreSQL, a database of the test binary's own on the
// server of TEST_DATABASE_URL (bin/testpg sets it; make test runs these
// under it), migrated by the fake. Without TEST_DATABASE_URL the
// postgres subtest is skipped, saying so.
func eachStore(t *testing.T, test func(t *testing.T, start func(opts ...fakestripe.Option) *fake)) {
	t.Helper()
	for _, store := range []string{"memory", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			test(t, func(opts ...fakestripe.Option) *fake { return serveFake(t, store, opts) })
		})
	}
}

func serveFake(t *testing.T, store string, opts []fakestripe.Option) *fake {
	t.Helper()
	hooks := &hookSink{}
	hookSrv := httptest.NewServer(hooks)
	t.Cleanup(hookSrv.Close)
	opts = append([]fakestripe.Option{fakestripe.WithLogger(slog.New(slog.DiscardHandler)),
		fakestripe.WithWebhooks(hookSrv.URL, "whsec_test")}, opts...)
	var p *fakestripe.Provider
	if store == "memory" {
		p = fakestripe.NewInMemory(testSecret, opts...)
	} else {
		p = fakestripe.New(testPool(t), testSecret, opts...)
	}
	e := echo.New()
	p.Mount(e)
	srv := httptest.NewServer(e)
	t.Cleanup(func() {
		srv.Close()
		p.Close()
	})
	return &fake{Provider: p, url: srv.URL, hooks: hooks, keys: randomHex() + "-"}
}

var (
	poolOnce sync.Once
	pool     *pgxpool.Pool
	poolErr  error
	dropDB   func()
)

// TestMain drops the database testPool made, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	if dropDB != nil {
		dropDB()
	}
	os.Exit(code)
}

// testPool is a pool on a database made for this test binary and migrated
// by the fake, or skips the test without TEST_DATABASE_URL.
func testPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	admin := os.Getenv("TEST_DATABASE_URL")
	if admin == "" {
		t.Skip("TEST_DATABASE_URL is not set: run under bin/testpg for the postgres store")
	}
	poolOnce.Do(func() {
		ctx := context.Background()
		name := "fakestripe_test_" + randomHex()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			poolErr = err
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			poolErr = err
			return
		}
		cfg, err := pgxpool.ParseConfig(admin)
		if err != nil {
			poolErr = err
			return
		}
		cfg.ConnConfig.Database = name
		if pool, poolErr = pgxpool.NewWithConfig(ctx, cfg); poolErr != nil {
			return
		}
		dropDB = func() {
			pool.Close()
			if conn, err := pgx.Connect(ctx, admin); err == nil {
				_, _ = conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)")
				conn.Close(ctx)
			}
		}
		poolErr = fakestripe.Migrate(ctx, pool)
	})
	if poolErr != nil {
		t.Fatalf("the fake's test database: %v", poolErr)
	}
	return pool
}

// response is an answer of the fake, its body decoded.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// errorField is the field of the answer's error object, "" when absent.
func (r response) errorField(name string) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e[name].(string)
	return s
}

// call sends a request to the fake's API: the form in the body of a
// POST, in the query of a GET, with the idempotency key when not "".
func (f *fake) call(t *testing.T, method, path, key string, form url.Values) response {
	t.Helper()
	r, err := f.try(method, path, key, form, 0)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// try is call without the test, and with a timeout (none if zero).
func (f *fake) try(method, path, key string, form url.Values, timeout time.Duration) (response, error) {
	u, body := f.url+path, io.Reader(nil)
	if method == http.MethodGet {
		u += "?" + form.Encode()
	} else {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Authorization", "Bearer "+testSecret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if key != "" {
		req.Header.Set("Idempotency-Key", f.keys+key)
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	out := response{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if err := json.Unmarshal(raw, &out.body); err != nil {
		return response{}, err
	}
	return out, nil
}

// charged creates and confirms a PaymentIntent of amount euro cents with
// the card that succeeds, and returns it.
func (f *fake) charged(t *testing.T, amount string) fakestripe.Intent {
	t.Helper()
	r := f.call(t, http.MethodPost, "/v1/payment_intents", "charge-"+randomHex(), url.Values{
		"amount": {amount}, "currency": {"eur"}, "payment_method": {"pm_card_visa"}, "confirm": {"true"},
	})
	if r.status != http.StatusOK || r.body["status"] != fakestripe.StatusSucceeded {
		t.Fatalf("charge: got %d %s", r.status, r.raw)
	}
	return f.intent(t, r.body["id"].(string))
}

// intent reads the intent id as the fake holds it.
func (f *fake) intent(t *testing.T, id string) fakestripe.Intent {
	t.Helper()
	in, err := f.Intent(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// hookSink catches the events the fake delivers.
type hookSink struct {
	mu     sync.Mutex
	events []map[string]any
}

func (h *hookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev map[string]any
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
}

// objects returns the objects of the events of type typ once n have
// arrived, or fails the test after a few seconds.
func (h *hookSink) objects(t *testing.T, typ string, n int) []map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var out []map[string]any
		h.mu.Lock()
		for _, ev := range h.events {
			if ev["type"] == typ {
				data, _ := ev["data"].(map[string]any)
				object, _ := data["object"].(map[string]any)
				out = append(out, object)
			}
		}
		h.mu.Unlock()
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d %s events, want %d", len(out), typ, n)
		}
	}
}

// randomHex is 12 random hex digits.
func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
