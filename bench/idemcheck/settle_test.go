package idemcheck

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// settle waits as a client should after a 409: the answer's Retry-After in
// either of its forms, delay-seconds or an HTTP date (read by the Go
// client's own parser), capped at 2 s; 200 ms without one.
func TestSettleHonoursRetryAfterInBothForms(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter func() string
		atLeast    time.Duration
	}{
		{"seconds", func() string { return "1" }, 900 * time.Millisecond},
		// An HTTP date has a resolution of a second: 2 s ahead is 1 to 2 s.
		{"HTTP date", func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) }, 900 * time.Millisecond},
		{"unreadable", func() string { return "soon" }, 150 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var at []time.Time
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				at = append(at, time.Now())
				first := len(at) == 1
				mu.Unlock()
				if first {
					w.Header().Set("Retry-After", tc.retryAfter())
					w.WriteHeader(http.StatusConflict)
					return
				}
				w.WriteHeader(http.StatusCreated)
			}))
			defer srv.Close()
			c, err := New(Config{BaseURL: srv.URL, Path: "/things", Credentials: []Credential{{}}}, Profile{})
			if err != nil {
				t.Fatal(err)
			}
			key := "k"
			if r := c.settle(t.Context(), &key, `{}`); r.Status != http.StatusCreated {
				t.Fatalf("got %d (%v), want 201 after one 409", r.Status, r.Err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(at) != 2 {
				t.Fatalf("got %d requests, want 2", len(at))
			}
			if wait := at[1].Sub(at[0]); wait < tc.atLeast || wait > 2500*time.Millisecond {
				t.Errorf("waited %s after a 409 with Retry-After %q, want between %s and the 2 s cap", wait, tc.retryAfter(), tc.atLeast)
			}
		})
	}
}
