package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
)

// The browser cases of a key per cart version (issue 10): every render of
// one cart version carries one key, so tabs, refreshes and reopened
// checkouts pay for it once; a form of an older version is answered with
// the cart as it is now; an order closes its cart.

func TestTwoTabsPayOnce(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "book-retries")
	tab1 := s.checkoutForm(t, goodCard)
	tab2 := s.checkoutForm(t, goodCard)
	if tab1.Get("idempotency_key") != tab2.Get("idempotency_key") {
		t.Fatalf("two tabs got keys %q and %q, want the cart version's one key", tab1.Get("idempotency_key"), tab2.Get("idempotency_key"))
	}
	id := wantReceipt(t, s.follow(t, s.post(t, "/checkout", tab1)))

	second := s.post(t, "/checkout", tab2)
	if want := "/orders/" + id + "?replayed=1"; second.status != http.StatusSeeOther || second.header.Get("Location") != want {
		t.Fatalf("second tab: got %d to %q, want 303 to %q", second.status, second.header.Get("Location"), want)
	}
	receipt := s.follow(t, second)
	if got := wantReceipt(t, receipt); got != id {
		t.Errorf("second tab: got order %s, want the first tab's %s", got, id)
	}
	if receipt.testid("already-placed").Length() != 1 {
		t.Error("second tab's receipt without the already-placed note")
	}
	h.WantStats(t, 1, 1)
}

func TestTwoTabsPayAtOnce(t *testing.T) {
	t.Parallel()
	claimed, release := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, holdFirst(claimed, release))
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	tab1, tab2 := s.checkoutForm(t, goodCard), s.checkoutForm(t, goodCard)

	// The first tab's attempt holds the key after its claim until the
	// second tab's submit has met the claimed key (counted as a conflict).
	first := make(chan page)
	go func() { first <- s.post(t, "/checkout", tab1) }()
	<-claimed
	second := make(chan page)
	go func() { second <- s.post(t, "/checkout", tab2) }()
	for h.Metric(t, "exactlyonce_claims_total", "outcome", "conflict") < 1 {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	p1, p2 := <-first, <-second
	// The second tab waited for the first and lands on the same receipt.
	if p1.status != http.StatusSeeOther || p2.header.Get("Location") != p1.header.Get("Location") {
		t.Errorf("got %d to %q and %d to %q, want both 303 to one receipt",
			p1.status, p1.header.Get("Location"), p2.status, p2.header.Get("Location"))
	}
	h.WantStats(t, 1, 1)
}

func TestRefreshAndReopenedCheckoutKeepTheKey(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "tee-idempotent")
	opened := s.checkoutForm(t, goodCard)
	refreshed := s.checkoutForm(t, goodCard) // GET /checkout again
	s.get(t, "/cart")                        // back to the cart, without changing it
	reopened := s.checkoutForm(t, goodCard)
	for name, f := range map[string]map[string][]string{"refresh": refreshed, "reopened checkout": reopened} {
		if got := f["idempotency_key"][0]; got != opened.Get("idempotency_key") {
			t.Errorf("%s: got key %q, want the cart version's key %q", name, got, opened.Get("idempotency_key"))
		}
	}
	id := wantReceipt(t, s.follow(t, s.post(t, "/checkout", reopened)))
	again := s.post(t, "/checkout", opened)
	if want := "/orders/" + id + "?replayed=1"; again.header.Get("Location") != want {
		t.Errorf("the first rendering paid after the reopened one: got %d to %q, want 303 to %q", again.status, again.header.Get("Location"), want)
	}
	h.WantStats(t, 1, 1)
}

func TestCartChangedInAnotherTab(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	stale := s.checkoutForm(t, goodCard)
	s.addToCart(t, "book-retries") // in another tab

	p := s.post(t, "/checkout", stale)
	if p.status != http.StatusConflict || p.testid("cart-changed").Length() != 1 {
		t.Fatalf("got %d, want 409 with the cart-changed notice", p.status)
	}
	h.WantNothingStored(t)
	if got := p.text("total"); !strings.Contains(got, "€46.50") {
		t.Errorf("got total %q, want the new total €46.50", got)
	}
	fresh := formValues(p.testid("checkout-form"))
	if fresh.Get("idempotency_key") == stale.Get("idempotency_key") || fresh.Get("cart_version") == stale.Get("cart_version") {
		t.Fatalf("the fresh form has key %q version %s, want a new key for a new version", fresh.Get("idempotency_key"), fresh.Get("cart_version"))
	}
	if got := fresh.Get("amount"); got != "4650" {
		t.Errorf("got amount %q in the fresh form, want 4650", got)
	}
	// Sending the stale form again changes nothing.
	if again := s.post(t, "/checkout", stale); again.status != http.StatusConflict {
		t.Errorf("stale form again: got %d, want 409", again.status)
	}
	h.WantNothingStored(t)

	fresh.Set("card", goodCard)
	receipt := s.follow(t, s.post(t, "/checkout", fresh))
	wantReceipt(t, receipt)
	if got := receipt.text("amount"); !strings.Contains(got, "€46.50") {
		t.Errorf("got amount %q, want €46.50", got)
	}
	h.WantStats(t, 1, 1)
}

func TestOrderClosesTheCart(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	form := s.checkoutForm(t, goodCard)
	id := wantReceipt(t, s.follow(t, s.post(t, "/checkout", form)))
	if got := cartQuantities(t, h, s.id(t)); len(got) != 0 {
		t.Errorf("cart after the order: got %v, want a new, empty cart", got)
	}
	// Issue 38: the checkout of the cart just ordered says it is paid,
	// with the receipt (TestCheckoutOfAnOrderedCartSaysAlreadyPaid).
	if p := s.get(t, "/checkout"); p.status != http.StatusOK || p.testid("already-paid-receipt").AttrOr("href", "") != "/orders/"+id {
		t.Errorf("checkout after the order: got %d with receipt link %q, want 200 linking /orders/%s", p.status, p.testid("already-paid-receipt").AttrOr("href", ""), id)
	}

	// The next purchase is a new cart, a new key and a new order; the old
	// form still replays the first.
	s.addToCart(t, "mug-espresso")
	next := s.checkoutForm(t, goodCard)
	if next.Get("cart_id") == form.Get("cart_id") || next.Get("idempotency_key") == form.Get("idempotency_key") {
		t.Fatal("the next purchase reuses the ordered cart or its key")
	}
	if got := s.post(t, "/checkout", form).header.Get("Location"); got != "/orders/"+id+"?replayed=1" {
		t.Errorf("old form: got redirect to %q, want the first order replayed", got)
	}
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", next)))
	h.WantStats(t, 2, 2)
}

// TestRecoveredOrderClosesTheCart: the completer, not the request, writes
// the order, and the same statement closes the cart.
func TestRecoveredOrderClosesTheCart(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) {
		withSecret(cfg)
		cfg.LockTimeout = time.Second
	})
	s := newShopper(t, h)
	s.addToCart(t, "sticker-pack")
	form := s.checkoutForm(t, goodCard)
	h.SetProvider(t, 0, "after_charge")
	if p := s.post(t, "/checkout", form); p.testid("provider-outage").Length() != 1 {
		t.Fatalf("got %d, want the outage page", p.status)
	}
	h.SetProvider(t, 0, "none")
	if got := cartQuantities(t, h, s.id(t)); got["sticker-pack"] != 1 {
		t.Fatalf("cart before recovery: got %v, want it kept", got)
	}
	h.WaitLockExpired(t, apptest.Customer{ID: s.id(t)}, form.Get("idempotency_key"))
	if n, err := h.App.Completer.Pass(context.Background()); err != nil || n != 1 {
		t.Fatalf("completer pass: took %d keys, err %v; want 1", n, err)
	}
	h.WantStats(t, 1, 1)
	if got := cartQuantities(t, h, s.id(t)); len(got) != 0 {
		t.Errorf("cart after the completer's order: got %v, want a new, empty cart", got)
	}
	if p := s.get(t, "/checkout"); p.status != http.StatusOK || p.testid("already-paid").Length() != 1 {
		t.Errorf("checkout after the recovered order: got %d, want the already-paid page", p.status)
	}
	// The form's retry lands on the recovered order.
	if p := s.post(t, "/checkout", form); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/orders/") {
		t.Errorf("retry after recovery: got %d to %q, want the recovered receipt", p.status, p.header.Get("Location"))
	}
	h.WantStats(t, 1, 1)
}

func TestDeclineReleasesTheCartVersionKey(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "tee-idempotent")
	declined := s.checkoutForm(t, declinedCard)
	if p := s.post(t, "/checkout", declined); p.status != http.StatusPaymentRequired {
		t.Fatalf("got %d, want 402", p.status)
	}
	// The lines are unchanged, but the version's key was spent on the
	// decline: the release moves the cart to a new version (so a key
	// derived from the version changes too), a new checkout gets a new
	// key, and another tab still holding the declined one replays the
	// decline.
	retry := s.checkoutForm(t, goodCard)
	if retry.Get("idempotency_key") == declined.Get("idempotency_key") {
		t.Fatal("a checkout after a decline got the declined key")
	}
	if retry.Get("cart_version") == declined.Get("cart_version") {
		t.Errorf("got version %s after the decline, want a new version", retry.Get("cart_version"))
	}
	if p := s.post(t, "/checkout", declined); p.status != http.StatusPaymentRequired {
		t.Errorf("the declined form again: got %d, want the decline replayed (402)", p.status)
	}
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", retry)))
	h.WantStats(t, 1, 1)
}

// TestReplacedKeyCannotPayTheSameVersion: a kept key that no order used is
// replaced once it is old (so every form lives long enough to be paid
// with). A form still holding the old key is then refused like a form of
// an older cart, so one cart version still has one key that can pay.
func TestReplacedKeyCannotPayTheSameVersion(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	old := s.checkoutForm(t, goodCard)
	// Test SQL: age the kept key past the point where a render replaces it.
	if _, err := h.DB.Pool.Exec(context.Background(),
		`UPDATE carts SET order_key_at = now() - interval '1 day' WHERE customer_id = $1`, s.id(t)); err != nil {
		t.Fatal(err)
	}
	current := s.checkoutForm(t, goodCard)
	if current.Get("idempotency_key") == old.Get("idempotency_key") {
		t.Fatal("an old, unused key was not replaced")
	}
	if p := s.post(t, "/checkout", old); p.status != http.StatusConflict || p.testid("cart-changed").Length() != 1 {
		t.Fatalf("old key: got %d, want 409 with the cart-changed page", p.status)
	}
	h.WantNothingStored(t)
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", current)))
	if p := s.post(t, "/checkout", old); p.status != http.StatusSeeOther || !strings.HasSuffix(p.header.Get("Location"), "?replayed=1") {
		t.Errorf("old key after the order: got %d to %q, want the order with the already-placed note", p.status, p.header.Get("Location"))
	}
	h.WantStats(t, 1, 1)
}
