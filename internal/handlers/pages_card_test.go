package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
)

// A card number of the right length with a mistyped digit fails the Luhn
// check on the server: the pay form comes back with a 400 and the error
// next to the field, nothing is claimed or charged, and the same form with
// the number fixed places the order.
func TestMistypedCardKeepsTheForm(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	form := s.checkoutForm(t, "1234 5678 9012 3456")
	p := s.post(t, "/checkout", form)
	if p.status != http.StatusBadRequest || !strings.Contains(p.text("card-error"), "typo") {
		t.Fatalf("got %d with card error %q, want 400 and the form saying the number has a typo", p.status, p.text("card-error"))
	}
	if p.testid("card-hint").Length() != 0 {
		t.Error("the form offers the mistyped card as the one to use again")
	}
	if key, _ := p.testid("idempotency-key").Attr("value"); key != form.Get("idempotency_key") {
		t.Errorf("got key %q, want the same key %q: nothing was stored", key, form.Get("idempotency_key"))
	}
	h.WantNothingStored(t)
	again := formValues(p.testid("checkout-form"))
	again.Set("card", goodCard)
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", again)))
	h.WantStats(t, 1, 1)
}
