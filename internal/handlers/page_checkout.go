package handlers

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/formkey"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// testCards are shown on the checkout page: the fake provider's card that
// succeeds and the one it always declines.
var testCards = []views.TestCard{
	{Number: groupDigits(payment.SucceedingCard), Outcome: "succeeds", Succeeds: true},
	{Number: groupDigits(payment.DeclinedCard), Outcome: "is declined"},
}

// checkoutPage is GET /checkout: the order summary and the pay form, with
// the idempotency key of the cart's current version.
//
// Every render of one cart version carries the same key (it is kept with
// the cart), so a second tab, a refresh and a checkout reopened later all
// pay for the cart once. The page may also be kept in the browser's cache
// (private, revalidated on a normal visit): Back from the receipt shows this
// very form, and paying again replays the order.
func (h *Handler) checkoutPage(c echo.Context) error {
	id, ok := shopper(c)
	if !ok {
		return web.SeeOther(c, "/cart")
	}
	shown, ok, err := h.freshCheckout(c.Request().Context(), id, csrfToken(c))
	if err != nil {
		return err
	}
	if !ok {
		return web.SeeOther(c, "/cart")
	}
	countCart(c, shown.items)
	c.Response().Header().Set(echo.HeaderCacheControl, "private, no-cache")
	return web.Render(c, http.StatusOK, views.Checkout(checkoutView(shown.priced, shown.form)))
}

// freshCheckout is the pay form of the shopper's cart as it is now; ok is
// false when there is nothing to pay for.
func (h *Handler) freshCheckout(ctx context.Context, id uuid.UUID, csrf string) (shown shownForm, ok bool, err error) {
	// A key is minted for every render but kept only when the cart's
	// version has none yet (see cart.Store.BrowserCheckout).
	minted, err := h.formKeys.Mint()
	if err != nil {
		return shownForm{}, false, err
	}
	kept, key, ok, err := h.carts.BrowserCheckout(ctx, id, minted, h.formKeys.TTL()/2)
	if err != nil || !ok {
		return shownForm{}, false, err
	}
	priced, err := h.catalog.Price(ctx, kept.Items)
	if err != nil {
		return shownForm{}, false, err
	}
	return h.payForm(id, csrf, key, kept.ID, kept.Version, kept.Items, priced), true, nil
}

// payForm is the pay form for a cart version whose lines are priced, under
// key, signed for the shopper and for exactly what it shows.
func (h *Handler) payForm(id uuid.UUID, csrf, key string, cartID uuid.UUID, version int64, items []catalog.Item, priced catalog.Priced) shownForm {
	b := formkey.Binding{CartID: cartID, CartVersion: version, Items: items, Amount: priced.Amount}
	form := views.CheckoutForm{
		CSRF: csrf, Key: key, KeySig: h.formKeys.Sign(id, key, b),
		CartID: cartID.String(), CartVersion: version, Items: formItems(items), Amount: priced.Amount,
	}
	return shownForm{priced: priced, form: form, items: items}
}

// checkoutView is the checkout page of a form whose lines are priced.
func checkoutView(priced catalog.Priced, form views.CheckoutForm) views.CheckoutPage {
	return views.CheckoutPage{
		Lines: viewLines(priced.Lines, priced.Currency),
		Total: views.Money{Minor: priced.Amount, Currency: priced.Currency},
		Form:  form,
		Cards: testCards,
	}
}

// groupDigits writes a card number in groups of four, as printed on cards.
func groupDigits(n string) string {
	var b strings.Builder
	for i, r := range n {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}
