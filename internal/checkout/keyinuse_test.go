package checkout_test

import (
	"context"
	"testing"
)

// KeyInUse tells a key some order claimed from one no order has: a request
// refused for a precondition (a cart version) asks it before refusing, so
// that a retry of an order in use is answered by that order.
func TestKeyInUseTellsAClaimedKeyFromANewOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, customer, _ := newCountedEngine(t, nil)
	if used, err := e.KeyInUse(ctx, customer, "k"); err != nil || used {
		t.Errorf("a new key: got %v, %v, want not in use", used, err)
	}
	if _, err := e.Place(ctx, attempt(customer, "k")); err != nil {
		t.Fatal(err)
	}
	if used, err := e.KeyInUse(ctx, customer, "k"); err != nil || !used {
		t.Errorf("a key whose order was placed: got %v, %v, want in use", used, err)
	}
	if used, err := e.KeyInUse(ctx, customer, "other"); err != nil || used {
		t.Errorf("another key: got %v, %v, want not in use", used, err)
	}
}
