package app_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
)

// serveAdmin serves h's admin listener on loopback until the test ends and
// returns its base URL.
func serveAdmin(t *testing.T, h *apptest.Harness) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.App.ServeAdmin(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("admin server: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// send sends a request to the admin listener as a page in the operator's
// browser (or a script) would, with the given Host, Origin and credentials.
func send(t *testing.T, method, url, host, origin, token, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", "cross-site")
	}
	if token != "" {
		req.SetBasicAuth("operator", token)
	}
	req.Header.Set("Content-Type", "text/plain") // a "simple" request: no preflight
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

const adminToken = "an-operator-token-of-32-characters!!"

// The admin listener cannot be turned against the outbox from a browser: a
// cross-site page, a rebound host name, a request without the operator's
// credential, and even the operator deleting or cancelling a job, are all
// refused, and the order keeps its jobs.
func TestAdminListenerIsGuarded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		token string // the server's ADMIN_TOKEN
	}{{"without ADMIN_TOKEN", ""}, {"with ADMIN_TOKEN", adminToken}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := apptest.New(t, func(c *apptest.Setup) { c.AdminToken = tc.token })
			c := h.NewCustomer(t)
			if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
				t.Fatalf("place order: got %d %s", r.Status, r.Body)
			}
			base := serveAdmin(t, h)
			deleteJobs := `{"job_ids":[1,2]}`
			for _, step := range []struct {
				what                string
				method, path, host  string
				origin, token, body string
				want                int
			}{
				{"cross-site delete", http.MethodPost, "/riverui/api/jobs/delete", "", "https://evil.example", tc.token, deleteJobs, http.StatusForbidden},
				{"rebound host", http.MethodPut, "/riverui/api/queues/default/pause", "rebound.evil.example:9090", "", tc.token, "", http.StatusMisdirectedRequest},
				{"rebound host, reading", http.MethodGet, "/metrics", "rebound.evil.example:9090", "", "", "", http.StatusMisdirectedRequest},
				{"the operator deleting jobs", http.MethodPost, "/riverui/api/jobs/delete", "", "", tc.token, deleteJobs, map[bool]int{true: http.StatusForbidden, false: http.StatusConflict}[tc.token == ""]},
				{"the operator cancelling jobs", http.MethodPost, "/riverui/api/jobs/cancel", "", "", tc.token, deleteJobs, map[bool]int{true: http.StatusForbidden, false: http.StatusConflict}[tc.token == ""]},
				{"metrics", http.MethodGet, "/metrics", "", "", "", "", http.StatusOK},
			} {
				if got := send(t, step.method, base+step.path, step.host, step.origin, step.token, step.body); got != step.want {
					t.Errorf("%s: got %d, want %d", step.what, got, step.want)
				}
			}
			if tc.token != "" {
				if got := send(t, http.MethodGet, base+"/riverui/api/jobs?state=available", "", "", "", ""); got != http.StatusUnauthorized {
					t.Errorf("River UI without the credential: got %d, want 401", got)
				}
				if got := send(t, http.MethodGet, base+"/riverui/api/jobs?state=available", "", "", "wrong", ""); got != http.StatusUnauthorized {
					t.Errorf("River UI with a wrong credential: got %d, want 401", got)
				}
				if got := send(t, http.MethodGet, base+"/riverui/api/jobs?state=available", "", "", tc.token, ""); got != http.StatusOK {
					t.Errorf("River UI with the credential: got %d, want 200", got)
				}
			} else if got := send(t, http.MethodPut, base+"/riverui/api/queues/default/pause", "", "", "", ""); got != http.StatusForbidden {
				t.Errorf("pausing the queue without ADMIN_TOKEN: got %d, want 403 (read-only)", got)
			}
			if n := h.Count(t, `SELECT count(*) FROM river_job`); n != 2 {
				t.Errorf("got %d outbox jobs after the attempts, want the order's 2", n)
			}
		})
	}
}
