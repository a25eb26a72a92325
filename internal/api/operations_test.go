package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/problem"
)

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	if r := h.Do(t, http.MethodGet, "/healthz", ""); r.Status != http.StatusOK {
		t.Errorf("healthz: got %d %s, want 200", r.Status, r.Body)
	}
	if r := h.Do(t, http.MethodGet, "/readyz", ""); r.Status != http.StatusOK {
		t.Errorf("readyz: got %d %s, want 200 on a migrated database", r.Status, r.Body)
	}
	h.DB.Pool.Close() // the database goes away
	r := h.Do(t, http.MethodGet, "/readyz", "")
	var body map[string]any
	r.JSON(t, &body)
	if r.Status != http.StatusServiceUnavailable || body["reason"] != "database unreachable" {
		t.Errorf("readyz without a database: got %d %s, want 503", r.Status, r.Body)
	}
	if r := h.Do(t, http.MethodGet, "/healthz", ""); r.Status != http.StatusOK {
		t.Errorf("healthz without a database: got %d, want 200 (the process is up)", r.Status)
	}
}

func TestIdempotencyPolicy(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.KeyRetention = 2 * time.Hour })
	r := h.Do(t, http.MethodGet, "/api/idempotency-policy", "")
	var p struct {
		Retention    int64 `json:"retention_seconds"`
		LockTimeout  int64 `json:"lock_timeout_seconds"`
		MaxKeyLength int   `json:"max_key_length"`
	}
	r.JSON(t, &p)
	if r.Status != http.StatusOK || p.Retention != 7200 || p.LockTimeout != 30 || p.MaxKeyLength != 255 {
		t.Errorf("got %d %s, want retention 7200, lock 30, max length 255", r.Status, r.Body)
	}
}

func TestKeyEvents(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	alice, bob := h.NewCustomer(t), h.NewCustomer(t)
	key := "order/42 ?#" // needs percent-encoding in a path
	path := "/api/keys/order%2F42%20%3F%23/events"
	h.PlaceOrder(t, alice, key, oneMug)
	h.PlaceOrder(t, alice, key, oneMug) // a replay changes nothing

	r := h.Do(t, http.MethodGet, path, "", "Authorization", "Bearer "+alice.Token)
	var events []apptest.KeyEvent
	r.JSON(t, &events)
	if got, want := apptest.EventNames(events), []string{"claimed", "finished"}; r.Status != http.StatusOK || !slices.Equal(got, want) {
		t.Fatalf("got %d %v, want 200 %v", r.Status, got, want)
	}
	if events[0].At.IsZero() || events[1].At.Before(events[0].At) || events[1].Detail["status"] != float64(201) {
		t.Errorf("got %+v, want ordered times and the finished status", events)
	}
	if strings.Contains(string(r.Body), "lock_token") {
		t.Errorf("events expose the lock token: %s", r.Body)
	}

	r = h.Do(t, http.MethodGet, path, "", "Authorization", "Bearer "+bob.Token)
	if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != "[]" {
		t.Errorf("another customer's key: got %d %s, want an empty trail", r.Status, r.Body)
	}
	apptest.WantProblem(t, h.Do(t, http.MethodGet, path, ""), problem.Unauthorized)
}

func TestMetricsCountClaimsAndRequests(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	h.PlaceOrder(t, c, "k", oneMug)
	h.PlaceOrder(t, c, "k", oneMug)
	h.PlaceOrder(t, c, "k", `{"items": [{"sku": "mug-espresso", "quantity": 2}]}`)
	h.Do(t, http.MethodGet, "/api/orders/0190d0a0-0000-7000-8000-000000000000", "", "Authorization", "Bearer "+c.Token)

	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"exactlyonce_claims_total", []string{"outcome", "new"}, 1},
		{"exactlyonce_claims_total", []string{"outcome", "replay"}, 1},
		{"exactlyonce_claims_total", []string{"outcome", "mismatch"}, 1},
		{"exactlyonce_provider_call_duration_seconds_count", []string{"call", "confirm", "result", "succeeded"}, 1},
		{"exactlyonce_http_request_duration_seconds_count", []string{"method", "POST", "route", "/api/orders", "status", "201"}, 2},
		{"exactlyonce_http_request_duration_seconds_count", []string{"method", "POST", "route", "/api/orders", "status", "422"}, 1},
		// The route template, not the raw path, whatever id was asked for.
		{"exactlyonce_http_request_duration_seconds_count", []string{"method", "GET", "route", "/api/orders/:id", "status", "404"}, 1},
	} {
		if got := h.Metric(t, tc.name, tc.labels...); got != tc.want {
			t.Errorf("%s%v: got %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestLogsRedactSecrets(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.Log = logging.New(&out, "json", slog.LevelDebug) })
	c := h.NewCustomer(t)
	const (
		key  = "secret-key-0123456789abcdef"
		card = "4000000000000002" // declined, so the error path logs too
	)
	h.PlaceOrder(t, c, key, `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "`+card+`"}`)

	logs := out.String()
	for _, secret := range []string{key, c.Token, card} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs)
		}
	}
	var claim map[string]any
	for line := range strings.SplitSeq(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "claim" {
			claim = rec
		}
	}
	if claim == nil || claim["key"] != logging.RedactKey(key) || claim["request_id"] == "" || claim["request_id"] == nil {
		t.Errorf("got claim log %v, want the redacted key and a request id", claim)
	}
}
