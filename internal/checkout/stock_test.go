package checkout_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
)

// The stock tests (issue 40): a claim reserves, a finish sells or releases,
// each exactly once; a product with too few left is refused before any
// charge. Each ends with the stock read from the database, and with its
// invariant: received = on hand + reserved + sold.

func receive(t *testing.T, h *apptest.Harness, sku string, n int32) {
	t.Helper()
	if _, err := h.DB.ReceiveStock(context.Background(), db.ReceiveStockParams{Sku: sku, Quantity: n}); err != nil {
		t.Fatalf("receive %d %s: %v", n, sku, err)
	}
}

// wantStock checks what is on hand of sku and, across the whole database,
// that every unit received is on hand, reserved or sold.
func wantStock(t *testing.T, h *apptest.Harness, sku string, onHand int64) {
	t.Helper()
	if got := h.Count(t, `SELECT on_hand FROM stock WHERE sku = $1`, sku); got != onHand {
		t.Errorf("%s: %d on hand, want %d", sku, got, onHand)
	}
	if bad := h.Count(t, `SELECT count(*) FROM stock s WHERE s.received <> s.on_hand +
		(SELECT coalesce(sum(quantity), 0) FROM stock_reservations r WHERE r.sku = s.sku AND r.state IN ('reserved', 'sold'))`); bad != 0 {
		t.Errorf("%d products whose received is not on hand + reserved + sold", bad)
	}
}

func wantSoldOut(t *testing.T, r apptest.Response, says string) {
	t.Helper()
	if r.Status != http.StatusConflict {
		t.Fatalf("got %d %s, want 409 sold-out", r.Status, r.Body)
	}
	var p problem.Problem
	r.JSON(t, &p)
	if p.Type != "/problems/"+problem.SoldOut.Slug || !strings.Contains(p.Detail, says) || len(p.Errors) == 0 {
		t.Errorf("got %+v, want sold-out saying %q, with errors", p, says)
	}
}

// Two shoppers, one mug left: the first claims it and is held before its
// charge until the second has been answered, so the second meets the
// reservation whatever the scheduler does. The second is told "sold out"
// and no payment is started for it; the first pays.
func TestLastItemTwoShoppers(t *testing.T) {
	t.Parallel()
	release, claimed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h := apptest.New(t, func(cfg *apptest.Setup) {
		cfg.Hooks.AfterClaim = func(context.Context, checkout.Claimed) {
			once.Do(func() { close(claimed); waitOrTimeout(t, release) })
		}
	})
	receive(t, h, "mug-espresso", 1)
	a, b := h.NewCustomer(t), h.NewCustomer(t)
	first := make(chan apptest.Response, 1)
	go func() { first <- h.PlaceOrder(t, a, "a", oneMug) }()
	waitOrTimeout(t, claimed)
	wantStock(t, h, "mug-espresso", 0)

	wantSoldOut(t, h.PlaceOrder(t, b, "b", oneMug), "Espresso mug is sold out")
	if got := h.Count(t, `SELECT count(*) FROM idem_keys WHERE scope = $1::uuid::text`, b.ID); got != 0 {
		t.Errorf("the sold-out order left %d keys, want none", got)
	}
	close(release)
	if r := <-first; r.Status != http.StatusCreated {
		t.Fatalf("the first shopper: got %d %s, want 201", r.Status, r.Body)
	}
	h.WantStats(t, 1, 1)
	// One payment started in all, the first shopper's: none for the other.
	if in, err := h.Provider.IntentsByMetadata(context.Background(), nil); err != nil || len(in) != 1 {
		t.Errorf("got %d PaymentIntents (%v), want 1", len(in), err)
	}
	wantStock(t, h, "mug-espresso", 0)
	if got := h.Count(t, `SELECT count(*) FROM stock_reservations WHERE state = 'sold'`); got != 1 {
		t.Errorf("%d reservations sold, want 1", got)
	}
}

// Ten shoppers at once for three mugs, with no hook to order them: three
// orders, seven told "sold out", three charges, nothing left.
func TestTenShoppersThreeMugs(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	receive(t, h, "mug-espresso", 3)
	const n = 10
	customers := make([]apptest.Customer, n)
	for i := range customers {
		customers[i] = h.NewCustomer(t)
	}
	statuses := make(chan int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			statuses <- h.PlaceOrder(t, customers[i], "k", oneMug).Status
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[http.StatusCreated] != 3 || counts[http.StatusConflict] != n-3 {
		t.Errorf("got %v, want three 201 and seven 409", counts)
	}
	h.WantStats(t, 3, 3)
	wantStock(t, h, "mug-espresso", 0)
}

// A declined card ends its key with no order: the mug it reserved goes
// back, once, and the next shopper buys it.
func TestDeclineReleasesTheReservation(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	receive(t, h, "mug-espresso", 1)
	a, b := h.NewCustomer(t), h.NewCustomer(t)
	declined := `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "4000000000000002"}`
	if r := h.PlaceOrder(t, a, "a", declined); r.Status != http.StatusPaymentRequired {
		t.Fatalf("got %d %s, want 402", r.Status, r.Body)
	}
	wantStock(t, h, "mug-espresso", 1)
	// The decline replayed releases nothing more.
	if r := h.PlaceOrder(t, a, "a", declined); r.Status != http.StatusPaymentRequired {
		t.Fatalf("replay: got %d %s, want 402", r.Status, r.Body)
	}
	wantStock(t, h, "mug-espresso", 1)
	if r := h.PlaceOrder(t, b, "b", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("the next shopper: got %d %s, want 201", r.Status, r.Body)
	}
	wantStock(t, h, "mug-espresso", 0)
	h.WantStats(t, 1, 1)
}

// A replay takes nothing: the key's first claim reserved its mug.
func TestReplayReservesNothing(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	receive(t, h, "mug-espresso", 2)
	c := h.NewCustomer(t)
	for range 3 {
		if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
			t.Fatalf("got %d %s, want 201", r.Status, r.Body)
		}
	}
	wantStock(t, h, "mug-espresso", 1)
	h.WantStats(t, 1, 1)
}

// An order of two products, one of them short, takes neither: the claim
// fails as a whole, nothing is stored under its key, and the same key
// places the order once stock came in.
func TestShortOfOneTakesNothing(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	receive(t, h, "mug-espresso", 5)
	receive(t, h, "tee-idempotent", 1)
	c := h.NewCustomer(t)
	body := `{"items": [{"sku": "mug-espresso", "quantity": 2}, {"sku": "tee-idempotent", "quantity": 2}]}`
	wantSoldOut(t, h.PlaceOrder(t, c, "k", body), "only 1 of T-shirt")
	wantStock(t, h, "mug-espresso", 5)
	wantStock(t, h, "tee-idempotent", 1)
	h.WantNothingStored(t)

	receive(t, h, "tee-idempotent", 1)
	if r := h.PlaceOrder(t, c, "k", body); r.Status != http.StatusCreated {
		t.Fatalf("with stock in: got %d %s, want 201", r.Status, r.Body)
	}
	wantStock(t, h, "mug-espresso", 3)
	wantStock(t, h, "tee-idempotent", 0)
}

// A product that keeps no stock is made to order: never sold out.
func TestProductWithoutStockIsNeverSoldOut(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	receive(t, h, "tee-idempotent", 0)
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "k", `{"items": [{"sku": "mug-espresso", "quantity": 40}]}`); r.Status != http.StatusCreated {
		t.Fatalf("got %d %s, want 201", r.Status, r.Body)
	}
	if got := h.Count(t, `SELECT count(*) FROM stock_reservations`); got != 0 {
		t.Errorf("%d reservations, want none for a product that keeps no stock", got)
	}
}

// A key its request left started (the provider failed before charging)
// holds its mug until the completer settles it "not completed": then the
// mug goes back, once, however many passes and retries follow, and a
// key the completer finds charged sells it.
func TestCompleterReleasesOrSells(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) { cfg.LockTimeout = time.Second })
	receive(t, h, "mug-espresso", 2)
	c := h.NewCustomer(t)
	strand(t, h, c, "lost", oneMug, "before_charge")
	strand(t, h, c, "paid", oneMug, "after_charge")
	wantStock(t, h, "mug-espresso", 0)

	if n := pass(t, h); n != 2 {
		t.Fatalf("got %d keys taken over, want 2", n)
	}
	pass(t, h)
	h.PlaceOrder(t, c, "lost", oneMug)
	wantStock(t, h, "mug-espresso", 1)
	h.WantStats(t, 1, 1)
	states := h.Count(t, `SELECT count(*) FROM stock_reservations WHERE (key, state) IN (('lost', 'released'), ('paid', 'sold'))`)
	if states != 2 {
		t.Errorf("%d of the two reservations ended as their keys did, want 2", states)
	}
}
