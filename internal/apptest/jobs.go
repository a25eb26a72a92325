package apptest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"exactlyonce/mailcatcher"
)

// WithMailCatcher sends the confirmations to a mail catcher of the test's
// own, on a loopback port, shows its mail on the admin listener's /mail
// (through its HTTP listing, as make run's), and has idle job workers poll
// often.
func WithMailCatcher(tb testing.TB) (Option, *mailcatcher.Server) {
	tb.Helper()
	catcher, err := mailcatcher.Listen("127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { catcher.Close() })
	listing := httptest.NewServer(catcher.Handler())
	tb.Cleanup(listing.Close)
	return func(c *Setup) {
		c.Jobs.SMTPAddr, c.MailCatcherURL = catcher.Addr(), listing.URL
		c.Jobs.PollInterval = 50 * time.Millisecond
	}, catcher
}

// StartJobs starts the outbox's workers until the test ends.
func (h *Harness) StartJobs(tb testing.TB) {
	tb.Helper()
	if err := h.App.Jobs.Start(context.Background()); err != nil {
		tb.Fatalf("start jobs: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.App.Jobs.Stop(ctx); err != nil {
			tb.Errorf("stop jobs: %v", err)
		}
	})
}

// Count runs a query returning one number, failing the test on error.
func (h *Harness) Count(tb testing.TB, query string, args ...any) int64 {
	tb.Helper()
	var n int64
	if err := h.DB.Pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		tb.Fatalf("count %q: %v", query, err)
	}
	return n
}

// WaitCount waits up to 30 s for query to count want, failing the test
// with the last count when it does not.
func (h *Harness) WaitCount(tb testing.TB, want int64, query string, args ...any) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := h.Count(tb, query, args...)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%q: got %d, want %d after 30s", query, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
