package hapg_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"exactlyonce/bench/hapg"
	"exactlyonce/fakestripe"
	"exactlyonce/internal/app"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/database"
)

// TestRequireSyncRefusesKeysWhileThePrimaryCommitsAlone runs the shop with
// REQUIRE_SYNC_REPLICA on a real pg_auto_failover formation with a
// synchronous standby, and stops the standby: the primary then commits
// alone (wait_primary: synchronous_standby_names emptied), the state in
// which pg_auto_failover's own switchover lost the failover runs'
// acknowledged orders (docs/ha.md). While it lasts an order is refused,
// 503 with Retry-After and no key written, and a replay of an order placed
// before is still answered; once the standby is back and synchronous, the
// refused order is placed under its key.
func TestRequireSyncRefusesKeysWhileThePrimaryCommitsAlone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a pg_auto_failover formation")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	f, h := requireSyncShop(ctx, t, "requiresync-")
	c := h.NewCustomer(t)
	const order = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`
	if r := h.PlaceOrder(t, c, "before", order); r.Status != http.StatusCreated {
		t.Fatalf("order with a synchronous standby: got %d %s, want 201", r.Status, r.Body)
	}

	primary, err := f.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var standby *hapg.Node
	for _, n := range f.Nodes() {
		if n != primary {
			standby = n
		}
	}
	if err := standby.StopNode(ctx); err != nil {
		t.Fatal(err)
	}
	// The monitor takes the standby for failed and lets the primary commit
	// alone: synchronous_standby_names is emptied.
	d := h.DB
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		r, err := d.ReplicationState(ctx)
		if err == nil && r.SyncStandbyNames == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the primary still names a synchronous standby a minute after it stopped: %+v, %v", r, err)
		}
	}
	r := h.PlaceOrder(t, c, "alone", order)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("order while the primary commits alone: got %d (Retry-After %q) %s, want 503 with Retry-After",
			r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	var keys int
	if err := h.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM idem_keys WHERE key = 'alone'`).Scan(&keys); err != nil || keys != 0 {
		t.Errorf("got %d rows for the refused key (%v), want none", keys, err)
	}
	if r := h.PlaceOrder(t, c, "before", order); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay while the primary commits alone: got %d, replayed %q, want the stored 201", r.Status, r.Header.Get("Idempotent-Replayed"))
	}

	if err := standby.StartNode(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitStable(ctx); err != nil {
		t.Fatal(err)
	}
	if r := h.PlaceOrder(t, c, "alone", order); r.Status != http.StatusCreated {
		t.Errorf("the refused order once the standby is back: got %d %s, want 201", r.Status, r.Body)
	}
}

// requireSyncShop starts a pg_auto_failover formation with a synchronous
// standby in a folder named from prefix under /tmp (which the postgres
// user can enter), migrates the shop and the fake provider on it, and
// returns it with a harness whose shop has REQUIRE_SYNC_REPLICA's policy
// on (CheckDurability). The formation stops at the test's cleanup.
func requireSyncShop(ctx context.Context, t *testing.T, prefix string) (*hapg.Formation, *apptest.Harness) {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := hapg.Start(ctx, hapg.Options{Dir: dir, Sync: true, Throwaway: true, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Stop(context.Background()) }) // the watchdog stops it too
	pool, err := database.OpenWith(ctx, f.URL("postgres"), database.PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := database.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := fakestripe.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	h := apptest.NewOnPool(t, pool)
	if err := app.CheckDurability(ctx, h.DB, true, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	return f, h
}
