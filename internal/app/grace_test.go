package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/localpg"
)

// TestRetryThroughAnOutageKeepsItsOrder stops the database under a client
// retrying an order whose outcome was lost, every retry answered 503, and
// starts it again; by then the key is older than the completer's grace
// (aged in SQL, so the test does not depend on how long a restart takes).
// The completer's first pass after the outage must leave the key to the
// client, who was there all along: its next retry places the order (201),
// instead of replaying the completer's 402 "not completed" for a purchase
// the client never gave up on (issue 28: 1–3 orders per failover run
// ended so).
func TestRetryThroughAnOutageKeepsItsOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg, opts, pool := ownDatabase(t)
	// Longer than a restart on a busy machine takes, so that the client's
	// last ask, just before it, is still within the grace afterwards.
	const grace = 30 * time.Second
	h := apptest.NewOnPool(t, pool, func(cfg *apptest.Setup) {
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
	var stoppedAt time.Time
	if err := pool.QueryRow(ctx, `SELECT now()`).Scan(&stoppedAt); err != nil {
		t.Fatal(err)
	}

	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for retry := range 5 {
		if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusServiceUnavailable {
			t.Fatalf("retry %d during the outage: got %d %s, want 503", retry, r.Status, r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := localpg.Start(ctx, opts); err != nil {
		t.Fatal(err)
	}
	waitReady(t, h)
	// The outage was longer than the grace: the key was claimed an hour ago.
	if _, err := pool.Exec(ctx, `UPDATE idem_keys SET created_at = created_at - interval '1 hour' WHERE key = 'k'`); err != nil {
		t.Fatal(err)
	}

	// The completer's pass comes first, as it may on any instance.
	if n, err := h.App.Completer.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("completer pass after the outage: got %d keys taken over, %v, want 0: the client asked during the outage", n, err)
	}
	// The pass wrote the asks the outage kept in memory.
	var asked bool
	if err := pool.QueryRow(ctx, `SELECT coalesce(asked_at > $1, false) FROM idem_keys WHERE key = 'k'`, stoppedAt).Scan(&asked); err != nil || !asked {
		t.Errorf("got an ask after the stop recorded: %v (%v), want the asks made during the outage written", asked, err)
	}
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("retry after the outage: got %d (replayed %q) %s, want a new 201", r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
	}
	h.WantStats(t, 1, 1)
}
