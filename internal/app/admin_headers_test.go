package app_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
)

// browserGet sends a GET as a browser would: from a page of another site when
// crossSite, and with host as its Host when set.
// answer is what the tests read of a response: its body is closed by the
// time they read it.
type answer struct {
	StatusCode int
	Header     http.Header
}

func browserGet(t *testing.T, url, host string, crossSite bool) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if crossSite {
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return answer{StatusCode: resp.StatusCode, Header: resp.Header}
}

func wantNoFraming(t *testing.T, what string, resp answer) {
	t.Helper()
	if got := resp.Header.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("%s: got X-Frame-Options %q, want DENY", what, got)
	}
	if got := resp.Header.Get("Content-Security-Policy"); !strings.Contains(got, "frame-ancestors 'none'") {
		t.Errorf("%s: got Content-Security-Policy %q, want frame-ancestors 'none'", what, got)
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: got X-Content-Type-Options %q, want nosniff", what, got)
	}
}

// Every answer of the admin listener forbids framing, River UI's and its
// refusals too (a framed River UI is a clickjacking of the operator's
// retries); and the profiler, whose GETs do something (a CPU profile or
// an execution trace runs for seconds, a heap profile may force a GC), is
// refused to a page of another site, as writes are.
func TestAdminListenerForbidsFramingAndCrossSiteProfiles(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	base := serveAdmin(t, h)

	resp := browserGet(t, base+"/riverui/", "", false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("River UI: got %d, want 200", resp.StatusCode)
	}
	wantNoFraming(t, "River UI", resp)
	misdirected := browserGet(t, base+"/metrics", "rebound.example", false)
	if misdirected.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("another host: got %d, want 421", misdirected.StatusCode)
	}
	wantNoFraming(t, "the admin's 421", misdirected)

	for _, path := range []string{"/debug/pprof/profile?seconds=1", "/debug/pprof/trace?seconds=1", "/debug/pprof/heap?gc=1", "/debug/pprof/"} {
		start := time.Now()
		if got := browserGet(t, base+path, "", true); got.StatusCode != http.StatusForbidden || time.Since(start) > 900*time.Millisecond {
			t.Errorf("a cross-site GET %s: got %d after %v, want 403 at once", path, got.StatusCode, time.Since(start))
		}
	}
	if got := browserGet(t, base+"/debug/pprof/", "", false); got.StatusCode != http.StatusOK {
		t.Errorf("the profiler's index from the operator (no Origin): got %d, want 200", got.StatusCode)
	}
}

// The shop's 421 (a Host it does not answer for) carries the security
// headers every other answer has.
func TestMisdirectedRequestCarriesTheSecurityHeaders(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	resp := browserGet(t, h.URL+"/", "rebound.example", false)
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("got %d, want 421", resp.StatusCode)
	}
	wantNoFraming(t, "the shop's 421", resp)
}
