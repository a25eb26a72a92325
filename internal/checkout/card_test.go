package checkout_test

import (
	"net/http"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/problem"
)

func TestNormalizeCard(t *testing.T) {
	for card, want := range map[string]bool{
		payment.SucceedingCard: true,
		payment.DeclinedCard:   true, // declined by the provider, not refused here
		"4242 4242-4242 4242":  true,
		"4242 4242 4242 4241":  false, // the last digit mistyped
		"4242 4242 4242 2442":  false, // two digits swapped
		"1234 5678 9012 3456":  false, // the number, "paid €58.50"
		"4242":                 false,
		"4242 4242 4242 424x":  false,
		"00000000000000000000": false, // 20 digits
	} {
		if _, got := checkout.NormalizeCard(card); got != want {
			t.Errorf("NormalizeCard(%q): got %v, want %v", card, got, want)
		}
	}
}

// A card number with a mistyped digit is refused by the API before the key
// is claimed: a 400 whose detail names the field, no key, no charge at the
// provider, no order; the same key, with the number fixed, places the order.
func TestAPIRefusesAMistypedCard(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	for _, card := range []string{"4242 4242 4242 4241", "1234 5678 9012 3456"} {
		r := h.PlaceOrder(t, c, "k-card", `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "`+card+`"}`)
		p := apptest.WantProblem(t, r, problem.InvalidRequest)
		if !strings.HasPrefix(p.Detail, "card ") || !strings.Contains(p.Detail, "Luhn") {
			t.Errorf("card %q: got detail %q, want one naming the card field and its check digit", card, p.Detail)
		}
		h.WantNothingStored(t)
	}
	r := h.PlaceOrder(t, c, "k-card", `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "4242 4242 4242 4242"}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("the same key with the number fixed: got %d %s, want 201", r.Status, r.Body)
	}
	h.WantStats(t, 1, 1)
}
