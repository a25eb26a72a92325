package cart_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/cart"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// newStore returns a Store on a fresh database with the demo catalog, and a
// shopper.
func newStore(t *testing.T) (*cart.Store, *database.DB, uuid.UUID) {
	t.Helper()
	d := database.New(pgtest.NewPool(t))
	ctx := context.Background()
	if err := catalog.Seed(ctx, d.Queries); err != nil {
		t.Fatal(err)
	}
	owner := uuid.New()
	if err := d.EnsureShopper(ctx, owner); err != nil {
		t.Fatal(err)
	}
	return cart.New(d, catalog.New(d.Queries, time.Minute)), d, owner
}

// TestBrowserCartOpenedOnceByRacingTabs: tabs adding to the cart of a new
// shopper at once open one cart between them, and a set repeated moves the
// version once.
func TestBrowserCartOpenedOnceByRacingTabs(t *testing.T) {
	t.Parallel()
	s, d, owner := newStore(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			<-start
			if err := s.SetBrowserLine(ctx, owner, "mug-espresso", 2); err != nil {
				t.Errorf("set line: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	var carts int
	if err := d.Pool.QueryRow(ctx, `SELECT count(*) FROM carts WHERE customer_id = $1`, owner).Scan(&carts); err != nil {
		t.Fatal(err)
	}
	if carts != 1 {
		t.Errorf("got %d carts, want 1", carts)
	}
	c, ok, err := s.Browser(ctx, owner)
	if err != nil || !ok {
		t.Fatalf("browser cart: ok %v, err %v", ok, err)
	}
	if c.Version != 2 || len(c.Items) != 1 || c.Items[0].Quantity != 2 {
		t.Errorf("got %+v, want version 2 (opened, then one change) with 2 mugs", c)
	}
}

// TestCheckoutKeyPerVersion: the same version shows the same key whatever
// key each render minted; a change of the lines clears it.
func TestCheckoutKeyPerVersion(t *testing.T) {
	t.Parallel()
	s, _, owner := newStore(t)
	ctx := context.Background()
	if err := s.SetBrowserLine(ctx, owner, "mug-espresso", 1); err != nil {
		t.Fatal(err)
	}
	open, _, err := s.Browser(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	_, first, _, err := s.BrowserCheckout(ctx, owner, "k-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, second, _, err := s.BrowserCheckout(ctx, owner, "k-2", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if first != "k-1" || second != "k-1" {
		t.Errorf("got keys %q and %q, want the first render's k-1 twice", first, second)
	}
	if err := s.SetBrowserLine(ctx, owner, "mug-espresso", 3); err != nil {
		t.Fatal(err)
	}
	shown, third, _, err := s.BrowserCheckout(ctx, owner, "k-3", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if third != "k-3" || shown.Version != open.Version+1 || shown.ID != open.ID {
		t.Errorf("after a change: got key %q at version %d, want k-3 at version %d", third, shown.Version, open.Version+1)
	}
	if _, _, ok, err := s.BrowserCheckout(ctx, uuid.New(), "k-4", time.Hour); err != nil || ok {
		t.Errorf("a shopper with no cart: got ok %v, err %v, want nothing to pay for", ok, err)
	}
}

// TestBrowserCheckoutOfAnEmptyCart: an emptied cart has nothing to pay
// for, and its version keeps no key (the rolled-back transaction).
func TestBrowserCheckoutOfAnEmptyCart(t *testing.T) {
	t.Parallel()
	s, _, owner := newStore(t)
	ctx := context.Background()
	if err := s.SetBrowserLine(ctx, owner, "mug-espresso", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBrowserLine(ctx, owner, "mug-espresso", 0); err != nil {
		t.Fatal(err)
	}
	if _, key, ok, err := s.BrowserCheckout(ctx, owner, "k-1", time.Hour); err != nil || ok || key != "" {
		t.Fatalf("empty cart: got key %q, ok %v, err %v; want nothing to pay for", key, ok, err)
	}
	if err := s.SetBrowserLine(ctx, owner, "mug-espresso", 2); err != nil {
		t.Fatal(err)
	}
	if _, key, ok, err := s.BrowserCheckout(ctx, owner, "k-2", time.Hour); err != nil || !ok || key != "k-2" {
		t.Fatalf("after adding a line: got key %q, ok %v, err %v; want k-2", key, ok, err)
	}
}
