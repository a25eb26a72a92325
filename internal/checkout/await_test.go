package checkout_test

import (
	"context"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
)

// A wait whose deadline has passed before it could look is over: Await must
// say the key is still held, not that its holder stopped. (It once said the
// latter, and a browser's second submit on a loaded machine then looped on
// Place and Await, hammering the database until the first's lock ran out.)
func TestAwaitPastItsDeadlineIsNotDone(t *testing.T) {
	t.Parallel()
	claimed, release := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.Hooks.AfterClaim = func(context.Context, checkout.Claimed) { close(claimed); <-release }
	})
	c := h.NewCustomer(t)
	done := make(chan struct{})
	go func() { h.PlaceOrder(t, c, "held", oneMug); close(done) }()
	<-claimed
	defer func() { close(release); <-done }()
	if h.App.Checkout.Await(context.Background(), c.ID, "held", time.Now().Add(-time.Second)) {
		t.Error("Await past its deadline reported the key free, while its holder holds it")
	}
	if h.App.Checkout.Await(context.Background(), c.ID, "held", time.Now().Add(100*time.Millisecond)) {
		t.Error("Await reported the key free while its holder holds it")
	}
}
