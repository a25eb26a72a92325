package checkout_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
)

// TestExpectedAmountIsCheckedByTheEngine: the browser prices nothing itself;
// the amount its page showed travels into the engine, which prices the
// order once and refuses a new key whose order costs anything else.
func TestExpectedAmountIsCheckedByTheEngine(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	ctx := context.Background()
	attempt := func(key string, expected int64) checkout.Attempt {
		return checkout.Attempt{
			CustomerID: c.ID, Key: key, Fingerprint: []byte(key), ExpectedAmount: expected,
			Order: checkout.Order{Items: []catalog.Item{{SKU: "mug-espresso", Quantity: 1}}, Card: "4242424242424242"},
		}
	}

	_, err := h.App.Checkout.Place(ctx, attempt("k-1", 999))
	var changed *checkout.PriceChangedError
	if !errors.As(err, &changed) {
		t.Fatalf("got %v, want a PriceChangedError", err)
	}
	if changed.Priced.Amount != 1200 {
		t.Errorf("got today's amount %d, want 1200", changed.Priced.Amount)
	}
	if s := h.Stats(t); s.KeysStarted+s.KeysFinished+s.Charges+s.Orders != 0 {
		t.Errorf("got %+v, want nothing stored", s)
	}

	res, err := h.App.Checkout.Place(ctx, attempt("k-1", 1200))
	if err != nil || res.Status != http.StatusCreated {
		t.Fatalf("got %d, %v; want 201", res.Status, err)
	}
	// A key in use is judged by what it was claimed for: the same request
	// is replayed even when the amount expected no longer matches.
	res, err = h.App.Checkout.Place(ctx, attempt("k-1", 999))
	if err != nil || !res.Replayed {
		t.Errorf("got %+v, %v; want the stored order replayed", res, err)
	}
	h.WantStats(t, 1, 1)
}
