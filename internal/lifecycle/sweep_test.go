package lifecycle_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/db"
	"exactlyonce/internal/lifecycle"
)

const (
	oneMug    = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`
	retention = 24 * time.Hour
	// expired is old enough for any key to have expired.
	expired = retention + time.Hour
)

func newSweeper(h *apptest.Harness, batch int) *lifecycle.Sweeper {
	return lifecycle.NewSweeper(h.DB, lifecycle.SweeperConfig{Retention: retention, Batch: batch},
		h.App.Metrics, slog.New(slog.DiscardHandler))
}

func sweep(t *testing.T, s *lifecycle.Sweeper) lifecycle.Swept {
	t.Helper()
	sw, err := s.Pass(context.Background())
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	return sw
}

// order places an order that must succeed.
func order(t *testing.T, h *apptest.Harness, c apptest.Customer, key string) apptest.Response {
	t.Helper()
	r := h.PlaceOrder(t, c, key, oneMug)
	if r.Status != http.StatusCreated {
		t.Fatalf("order %s: got %d %s, want 201", key, r.Status, r.Body)
	}
	return r
}

func keyExists(t *testing.T, h *apptest.Harness, c apptest.Customer, key string) bool {
	t.Helper()
	_, err := h.DB.GetKey(context.Background(), db.GetKeyParams{CustomerID: c.ID, Key: key})
	return err == nil
}

func TestSweeperDeletesOnlyExpiredFinishedKeys(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	order(t, h, c, "old")
	order(t, h, c, "young")
	// A live started key (locked for 30 s) as old as the expired one.
	h.SetProvider(t, 0, "before_charge")
	h.PlaceOrder(t, c, "started", oneMug)
	h.Backdate(t, c, "old", expired)
	h.Backdate(t, c, "started", expired)

	sw := sweep(t, newSweeper(h, 100))
	if sw.Keys != 1 || sw.Busy {
		t.Errorf("got %+v, want one key deleted", sw)
	}
	for key, want := range map[string]bool{"old": false, "young": true, "started": true} {
		if got := keyExists(t, h, c, key); got != want {
			t.Errorf("key %q: got exists=%v, want %v", key, got, want)
		}
	}
	// The trail outlives the key.
	if got, want := apptest.EventNames(h.KeyEvents(t, c, "old")), []string{"claimed", "finished", "expired"}; !slices.Equal(got, want) {
		t.Errorf("got events %v, want %v", got, want)
	}
	if got := h.Metric(t, "exactlyonce_sweeper_deleted_keys_total"); got != 1 {
		t.Errorf("got %v deleted keys in /metrics, want 1", got)
	}

	// Not even a started key whose lock expired long ago: its outcome is
	// unknown until the completer or a retry settles it.
	if _, err := h.DB.Pool.Exec(context.Background(),
		`UPDATE idem_keys SET locked_until = now() - interval '1 hour' WHERE key = 'started'`); err != nil {
		t.Fatal(err)
	}
	if sw := sweep(t, newSweeper(h, 100)); sw.Keys != 0 || !keyExists(t, h, c, "started") {
		t.Errorf("got %+v, want the started key kept", sw)
	}
}

func TestSweeperWorksInBoundedBatches(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	for i := range 7 {
		key := fmt.Sprintf("k%d", i)
		order(t, h, c, key)
		h.Backdate(t, c, key, expired)
	}
	// 7 keys in batches of 3: 3, 3, then 1, which ends the pass.
	if sw := sweep(t, newSweeper(h, 3)); sw.Keys != 7 || sw.KeyBatches != 3 {
		t.Errorf("got %+v, want 7 keys in 3 batches", sw)
	}
	if s := h.Stats(t); s.KeysFinished != 0 || s.Orders != 7 {
		t.Errorf("got %+v, want every key gone and the orders kept", s)
	}
}

func TestSweeperDeletesOldEvents(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	order(t, h, c, "k")
	// Events are kept two windows: the key expires first.
	h.Backdate(t, c, "k", 2*retention+time.Hour)
	sw := sweep(t, newSweeper(h, 100))
	if sw.Keys != 1 || sw.Events != 2 {
		t.Errorf("got %+v, want the key and its 2 old events deleted", sw)
	}
	if got := apptest.EventNames(h.KeyEvents(t, c, "k")); !slices.Equal(got, []string{"expired"}) {
		t.Errorf("got events %v, want only the new expired event", got)
	}
}

func TestSweeperRunsOnOneInstanceAtATime(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	order(t, h, c, "k")
	h.Backdate(t, c, "k", expired)

	// Another instance holds the sweep lock for the length of a batch.
	locked, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- pgx.BeginFunc(context.Background(), h.DB.Pool, func(tx pgx.Tx) error {
			var ok bool
			if err := tx.QueryRow(context.Background(), "SELECT pg_try_advisory_xact_lock($1)", idem.SweepLockID).Scan(&ok); err != nil || !ok {
				return fmt.Errorf("take sweep lock: got %v, %v", ok, err)
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	if sw := sweep(t, newSweeper(h, 100)); !sw.Busy || sw.Keys != 0 {
		t.Errorf("while another instance sweeps: got %+v, want busy and nothing deleted", sw)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sw := sweep(t, newSweeper(h, 100)); sw.Busy || sw.Keys != 1 {
		t.Errorf("after: got %+v, want one key deleted", sw)
	}
}

func TestExpiredKeyStartsNewOperation(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	first := order(t, h, c, "k")
	h.Backdate(t, c, "k", expired)
	sweep(t, newSweeper(h, 100))

	second := h.PlaceOrder(t, c, "k", oneMug)
	if second.Status != http.StatusCreated || second.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("after expiry: got %d (replayed %q) %s, want a new 201", second.Status, second.Header.Get("Idempotent-Replayed"), second.Body)
	}
	var a, b checkout.Receipt
	first.JSON(t, &a)
	second.JSON(t, &b)
	// A new operation is a new charge too: the provider key is derived
	// from the key's operation, not only from the key.
	if a.OrderID == b.OrderID || a.ChargeID == b.ChargeID {
		t.Errorf("got orders %s/%s and charges %s/%s, want two of each", a.OrderID, b.OrderID, a.ChargeID, b.ChargeID)
	}
	h.WantStats(t, 2, 2)
	want := []string{"claimed", "finished", "expired", "claimed", "finished"}
	if got := apptest.EventNames(h.KeyEvents(t, c, "k")); !slices.Equal(got, want) {
		t.Errorf("got events %v, want %v", got, want)
	}
}
