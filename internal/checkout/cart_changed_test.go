package checkout_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
)

// An order of a cart version that is no longer the cart's is refused with
// the cart as it is now, priced today: the page that shows it again (and a
// client) need not read and price the cart a second time.
func TestCartChangedCarriesTheCartAsItIsNow(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	cartID := uuid.New()
	put := func(body string) {
		t.Helper()
		r := h.Do(t, http.MethodPut, "/api/carts/"+cartID.String(), body, "Authorization", "Bearer "+c.Token)
		if r.Status != http.StatusOK {
			t.Fatalf("put cart: got %d %s, want 200", r.Status, r.Body)
		}
	}
	put(`{"items":[{"sku":"mug-espresso","quantity":1}]}`)
	stale := checkout.CartVersion{ID: cartID, Version: 1}
	put(`{"items":[{"sku":"mug-espresso","quantity":1},{"sku":"book-retries","quantity":1}]}`)

	_, err := h.App.Checkout.Place(context.Background(), checkout.Attempt{
		CustomerID: c.ID, Key: "stale", Fingerprint: []byte("stale"), Cart: &stale,
		Order: checkout.Order{Items: []catalog.Item{{SKU: "mug-espresso", Quantity: 1}}, Card: "4242424242424242"},
	})
	changed, ok := errors.AsType[*checkout.CartChangedError](err)
	if !ok || !errors.Is(err, checkout.ErrCartChanged) {
		t.Fatalf("got %v, want a *CartChangedError that is ErrCartChanged", err)
	}
	if changed.Now.ID != cartID || changed.Now.Version != 2 {
		t.Errorf("got the cart at %v, want %s at version 2", changed.Now, cartID)
	}
	if len(changed.Items) != 2 {
		t.Errorf("got lines %v, want the cart's 2 lines now", changed.Items)
	}
	if changed.Priced == nil || changed.Priced.Amount != 4650 {
		t.Errorf("got priced %+v, want the cart now at 4650", changed.Priced)
	}
	h.WantNothingStored(t)
}
