package checkout_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
)

// TestFinishLocksTheCartBeforeTheKey holds a cart order's two locks in the
// order a claim of its key takes them, the cart's row and then the key's,
// while the order finishes. A claim can hold the cart's row for a key that
// exists already: a second request with the same key, whose UPDATE of the
// cart waited for the first claim and re-checked only the cart's new row
// (READ COMMITTED), the key's absence with its old snapshot; its insert of
// the key then waits for whoever holds the key's row. A finish that locked
// the key's row and then waited for the cart's made a cycle, and
// PostgreSQL failed one side: in CI (TestCartCallsRaced) the finish, so a
// charged order answered 503 and was written only by the retry. The finish
// must take the cart's row first, as the claim does.
func TestFinishLocksTheCartBeforeTheKey(t *testing.T) {
	t.Parallel()
	var (
		atFinish = make(chan struct{})
		locked   = make(chan struct{})
	)
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.Hooks.BeforeFinish = func(context.Context, checkout.Claimed) {
			close(atFinish)
			waitOrTimeout(t, locked)
		}
	})
	c := h.NewCustomer(t)
	cartID := uuid.New()
	if r := h.Do(t, http.MethodPut, "/api/carts/"+cartID.String(), `{"items":[{"sku":"mug-espresso","quantity":1}]}`,
		"Authorization", "Bearer "+c.Token); r.Status != http.StatusOK {
		t.Fatalf("put cart: got %d %s, want 200", r.Status, r.Body)
	}

	ordered := make(chan apptest.Response, 1)
	go func() {
		ordered <- h.Do(t, http.MethodPost, "/api/carts/"+cartID.String()+"/order", "",
			"Authorization", "Bearer "+c.Token, "Idempotency-Key", "k")
	}()
	waitOrTimeout(t, atFinish)

	ctx := t.Context()
	tx, err := h.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after the commit
	// This side checks for deadlocks late: were there a cycle, the
	// finish's side, checking after the default second, would be failed,
	// as in CI.
	for _, sql := range []string{
		"SET LOCAL deadlock_timeout = '20s'",
		"UPDATE carts SET order_key = order_key WHERE id = '" + cartID.String() + "'",
	} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	close(locked)

	// The finish waits for a lock: for the cart's row, which this
	// transaction holds.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting bool
		if err := h.DB.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE query LIKE '%idem_finish%' AND wait_event_type = 'Lock' AND pid <> pg_backend_pid())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the finish did not wait for the cart's row within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The claim's second lock: its insert of the key, which exists.
	var inserted bool
	if err := tx.QueryRow(ctx, `SELECT idem_claim($1, 'k', '\x00', '1 minute', '{}', gen_random_uuid(), gen_random_uuid(), 'order')`,
		c.ID.String()).Scan(&inserted); err != nil {
		t.Fatalf("the claim's side: %v", err)
	}
	if inserted {
		t.Fatal("the claim's side inserted the key a second time")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	select {
	case r := <-ordered:
		if r.Status != http.StatusCreated {
			t.Errorf("order: got %d %s, want 201", r.Status, r.Body)
		}
	case <-time.After(time.Minute):
		t.Fatal("the order did not answer within a minute")
	}
	h.WantStats(t, 1, 1)
}
