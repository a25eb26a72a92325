package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/problem"
)

// sendTo sends a request to the harness with the Host header set to host.
func sendTo(t *testing.T, h *apptest.Harness, host, method, path, body string, headers ...string) apptest.Response {
	t.Helper()
	req, err := http.NewRequest(method, h.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return apptest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// A page that rebinds its domain to the server's address sends its own
// name as Host; it must not reach any handler (the demo's tests, demo/lab,
// check the same of the lab's controls).
func TestHostAllowList(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.AllowedHosts = []string{"shop.example"} })
	for _, host := range []string{"rebind.attacker.example", "rebind.attacker.example:80", "shop.example.attacker.example"} {
		r := sendTo(t, h, host, http.MethodPost, "/api/customers", `{}`)
		apptest.WantProblem(t, r, problem.MisdirectedRequest)
	}
	if r := sendTo(t, h, "rebind.attacker.example", http.MethodGet, "/", ""); r.Status != http.StatusMisdirectedRequest {
		t.Errorf("page: got %d, want 421", r.Status)
	}
	// An allowed name without a port is allowed on any port; the server's
	// own address always is.
	for _, host := range []string{"shop.example:8080", "SHOP.example", strings.TrimPrefix(h.URL, "http://")} {
		if r := sendTo(t, h, host, http.MethodGet, "/api/products", ""); r.Status != http.StatusOK {
			t.Errorf("host %q: got %d %s, want 200", host, r.Status, r.Body)
		}
	}
}

func TestRequestIDIsKeptOnlyWhenPlain(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	if got := h.Do(t, http.MethodGet, "/api/products", "", "X-Request-Id", "abc-123").Header.Get("X-Request-Id"); got != "abc-123" {
		t.Errorf("plain id: got %q, want it kept", got)
	}
	for name, id := range map[string]string{
		"60 KB":       strings.Repeat("a", 60<<10),
		"65 chars":    strings.Repeat("a", 65),
		"punctuation": "abc;rm -rf",
		"obs-text":    "abc\xff",
	} {
		got := h.Do(t, http.MethodGet, "/api/products", "", "X-Request-Id", id).Header.Get("X-Request-Id")
		if got == id || got == "" || len(got) > 64 {
			t.Errorf("%s: got response id of %d bytes, want a fresh one", name, len(got))
		}
	}
}

func TestAccessLogRedactsKeysInPaths(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.Log = logging.New(&out, "json", slog.LevelDebug) })
	c := h.NewCustomer(t)
	const key = "secret-key-0123456789abcdef"
	h.PlaceOrder(t, c, key, oneMug)
	if r := h.Do(t, http.MethodGet, "/api/keys/"+key+"/events", "", "Authorization", "Bearer "+c.Token); r.Status != http.StatusOK {
		t.Fatalf("events: got %d %s", r.Status, r.Body)
	}
	logs := out.String()
	if strings.Contains(logs, key) {
		t.Errorf("logs contain the key:\n%s", logs)
	}
	found := false
	for line := range strings.SplitSeq(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "request" && rec["route"] == "/api/keys/:key/events" {
			found = rec["path"] == "/api/keys/"+logging.RedactKey(key)+"/events"
		}
	}
	if !found {
		t.Errorf("no access-log line with the key redacted in its path:\n%s", logs)
	}
}

func TestAccessLogRedactsKeysInUnmatchedPaths(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.Log = logging.New(&out, "json", slog.LevelDebug) })
	c := h.NewCustomer(t)
	const key = "secret-key-0123456789abcdef"
	// No route matches these, so the log cannot rebuild them from one.
	for _, path := range []string{"/api/keys/" + key + "/events/", "/api/keys/" + key + "/eventz", "/api/keys/" + key, "/API/KEYS/" + key + "/events"} {
		h.Do(t, http.MethodGet, path, "", "Authorization", "Bearer "+c.Token)
	}
	logs := out.String()
	if strings.Contains(logs, key) {
		t.Errorf("logs contain the key:\n%s", logs)
	}
	found := false
	for line := range strings.SplitSeq(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "request" {
			found = found || rec["path"] == "/api/keys/"+logging.RedactKey(key)+"/events/"
		}
	}
	if !found {
		t.Errorf("no access-log line with the key redacted in its unmatched path:\n%s", logs)
	}
}

// Metrics and the profiler are served on the admin address only (ADMIN_ADDR).
func TestOperationsEndpointsAreNotPublic(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/heap"} {
		if r := h.Do(t, http.MethodGet, path, ""); r.Status != http.StatusNotFound {
			t.Errorf("public %s: got %d, want 404", path, r.Status)
		}
	}
	for _, path := range []string{"/metrics", "/debug/pprof/"} {
		if r := h.Admin(t, path); r.Status != http.StatusOK {
			t.Errorf("admin %s: got %d, want 200", path, r.Status)
		}
	}
}

// Header values with bytes net/http lets through (obs-text, 0x80 to 0xFF)
// reach the handlers, and are answered as problems like any bad value.
// (Control bytes, which net/http itself refuses before any handler, are
// answered by net/http: see docs/security.md.)
func TestOddHeaderBytesGetProblems(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	auth := "Bearer " + c.Token
	for _, tc := range []struct {
		name    string
		headers []string
		kind    problem.Kind
	}{
		{"key", []string{"Authorization", auth, "Idempotency-Key", "a\xffb"}, problem.InvalidKey},
		{"quoted key", []string{"Authorization", auth, "Idempotency-Key", "\"a\xffb\""}, problem.InvalidKey},
		{"token", []string{"Authorization", "Bearer \xff\xfe", "Idempotency-Key", "k"}, problem.Unauthorized},
		{"scheme", []string{"Authorization", "B\xe9arer " + c.Token, "Idempotency-Key", "k"}, problem.Unauthorized},
	} {
		r := h.Do(t, http.MethodPost, "/api/orders", oneMug, tc.headers...)
		if r.Status != tc.kind.Status {
			t.Errorf("%s: got %d %s, want %d", tc.name, r.Status, r.Body, tc.kind.Status)
			continue
		}
		apptest.WantProblem(t, r, tc.kind)
	}
	wantNoKeys(t, h)
}
