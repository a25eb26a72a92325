package cart_test

import (
	"context"
	"errors"
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
	_, first, err := s.Checkout(ctx, owner, open.ID, "k-1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, second, err := s.Checkout(ctx, owner, open.ID, "k-2", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if first != "k-1" || second != "k-1" {
		t.Errorf("got keys %q and %q, want the first render's k-1 twice", first, second)
	}
	if err := s.SetBrowserLine(ctx, owner, "mug-espresso", 3); err != nil {
		t.Fatal(err)
	}
	shown, third, err := s.Checkout(ctx, owner, open.ID, "k-3", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if third != "k-3" || shown.Version != open.Version+1 {
		t.Errorf("after a change: got key %q at version %d, want k-3 at version %d", third, shown.Version, open.Version+1)
	}
	if _, _, err := s.Checkout(ctx, uuid.New(), open.ID, "k-4", time.Hour); !errors.Is(err, cart.ErrNotFound) {
		t.Errorf("another shopper's checkout of this cart: got %v, want ErrNotFound", err)
	}
}
