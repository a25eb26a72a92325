package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"exactlyonce/internal/app"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/localpg"
)

// TestRetryThroughAnOutageKeepsItsOrder holds the database away for longer
// than the completer's grace while a client retries an order whose outcome
// was lost, every retry answered 503. When the database is back, the
// completer's first pass must leave the key to the client, who was there
// all along: its next retry places the order (201), instead of replaying
// the completer's 402 "not completed" for a purchase the client never gave
// up on (issue 28: 1–3 orders per failover run ended so).
func TestRetryThroughAnOutageKeepsItsOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg, opts, pool := ownDatabase(t)
	const grace = 2 * time.Second
	h := apptest.NewOnPool(t, pool, func(cfg *app.Config) {
		cfg.LockTimeout = time.Second
		cfg.CompleterGrace = grace
	})
	c := h.NewCustomer(t)

	// The provider fails before charging: the outcome is unknown to the
	// shop, the key stays started and is handed back.
	h.SetProvider(t, 0, "before_charge")
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusBadGateway {
		t.Fatalf("original: got %d %s, want 502", r.Status, r.Body)
	}
	h.SetProvider(t, 0, "none")
	h.WaitLockExpired(t, c, "k")

	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	retries := 0
	for until := time.Now().Add(grace + time.Second); time.Now().Before(until); retries++ {
		if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusServiceUnavailable {
			t.Fatalf("retry %d during the outage: got %d %s, want 503", retries, r.Status, r.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := localpg.Start(ctx, opts); err != nil {
		t.Fatal(err)
	}
	waitReady(t, h)

	// The completer's pass comes first, as it may on any instance.
	if n, err := h.App.Completer.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("completer pass after the outage: got %d keys taken over, %v, want 0: the client asked %d times during the outage", n, err, retries)
	}
	// The pass wrote the asks the outage kept in memory: the key says its
	// client asked after the grace had run out since the claim.
	var lateAsk bool
	if err := pool.QueryRow(ctx, `SELECT asked_at >= created_at + $1::interval FROM idem_keys WHERE key = 'k'`,
		grace.String()).Scan(&lateAsk); err != nil || !lateAsk {
		t.Errorf("got a late ask recorded %v (%v), want the asks made during the outage written", lateAsk, err)
	}
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry after the outage: got %d (replayed %q) %s, want a new 201", r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
	}
	h.WantStats(t, 1, 1)
}
