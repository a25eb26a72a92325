package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/db"
)

// The catalog says what is left of a product that keeps stock ("Only 2
// left"), shows a sold-out one as such with its button disabled, and says
// nothing of one made to order.
func TestCatalogSaysWhatIsLeft(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	for sku, n := range map[string]int32{"mug-espresso": 2, "tee-idempotent": 0} {
		if _, err := h.DB.ReceiveStock(context.Background(), db.ReceiveStockParams{Sku: sku, Quantity: n}); err != nil {
			t.Fatal(err)
		}
	}
	p := newShopper(t, h).get(t, "/")
	card := func(sku string) (stock string, disabled bool) {
		c := p.doc.Find(`[data-testid=product][data-sku="` + sku + `"]`)
		_, disabled = c.Find(`form[data-testid=add-to-cart] button`).Attr("disabled")
		return strings.TrimSpace(c.Find(`[data-testid=product-stock]`).Text()), disabled
	}
	for sku, want := range map[string]struct {
		stock    string
		disabled bool
	}{
		"mug-espresso": {"Only 2 left", false}, "tee-idempotent": {"Sold out", true}, "hoodie-409": {"", false},
	} {
		if stock, disabled := card(sku); stock != want.stock || disabled != want.disabled {
			t.Errorf("%s: says %q, button disabled %v; want %q, %v", sku, stock, disabled, want.stock, want.disabled)
		}
	}
}

// A shopper whose cart holds the last mug, bought by another shopper
// before they pay, is told it is sold out, and nothing is charged; the page
// says which product and leads back to the cart.
func TestPayingForWhatSoldMeanwhile(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	if _, err := h.DB.ReceiveStock(context.Background(), db.ReceiveStockParams{Sku: "mug-espresso", Quantity: 1}); err != nil {
		t.Fatal(err)
	}
	late, early := newShopper(t, h), newShopper(t, h)
	late.addToCart(t, "mug-espresso")
	form := late.checkoutForm(t, goodCard)
	early.addToCart(t, "mug-espresso")
	if p := early.post(t, "/checkout", early.checkoutForm(t, goodCard)); p.status != http.StatusSeeOther {
		t.Fatalf("the first shopper: got %d, want 303 to the receipt", p.status)
	}
	p := late.post(t, "/checkout", form)
	wantErrorPage(t, p, http.StatusConflict)
	if got := p.text("error-message"); !strings.Contains(got, "Espresso mug is sold out") {
		t.Errorf("the page says %q, want it to name the sold-out mug", got)
	}
	h.WantStats(t, 1, 1)
}
