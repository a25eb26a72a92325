package handlers

import (
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/cart"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/fakeprovider"
	"exactlyonce/internal/formkey"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// testCards are shown on the checkout page: the fake provider's card that
// succeeds and the one it always declines.
var testCards = []views.TestCard{
	{Number: groupDigits(fakeprovider.SucceedingCard), Outcome: "succeeds", Succeeds: true},
	{Number: groupDigits(fakeprovider.DeclinedCard), Outcome: "is declined"},
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
	page, ok, err := h.freshCheckout(c, id)
	if err != nil {
		return err
	}
	if !ok {
		return web.SeeOther(c, "/cart")
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "private, no-cache")
	return web.Render(c, http.StatusOK, views.Checkout(page))
}

// freshCheckout is the checkout page of the shopper's cart as it is now;
// ok is false when there is nothing to pay for.
func (h *Handler) freshCheckout(c echo.Context, id uuid.UUID) (page views.CheckoutPage, ok bool, err error) {
	ctx := c.Request().Context()
	open, ok, err := h.carts.Browser(ctx, id)
	if err != nil || !ok || len(open.Items) == 0 {
		return views.CheckoutPage{}, false, err
	}
	// A key is minted for every render but kept only when the cart's
	// version has none yet (see cart.Store.Checkout).
	minted, err := h.formKeys.Mint()
	if err != nil {
		return views.CheckoutPage{}, false, err
	}
	shown, key, err := h.carts.Checkout(ctx, id, open.ID, minted, h.formKeys.TTL()/2)
	if errors.Is(err, cart.ErrNotFound) || (err == nil && len(shown.Items) == 0) {
		// Ordered (in another tab) since the look-up above.
		return views.CheckoutPage{}, false, nil
	}
	if err != nil {
		return views.CheckoutPage{}, false, err
	}
	priced, err := h.catalog.Price(ctx, shown.Items)
	if err != nil {
		return views.CheckoutPage{}, false, err
	}
	b := formkey.Binding{CartID: shown.ID, CartVersion: shown.Version, Items: shown.Items, Amount: priced.Amount}
	form := views.CheckoutForm{
		CSRF: csrfToken(c), Key: key, KeySig: h.formKeys.Sign(id, key, b),
		CartID: shown.ID.String(), CartVersion: shown.Version, Items: formItems(shown.Items), Amount: priced.Amount,
	}
	return checkoutView(priced, form), true, nil
}

// renderCheckout renders the pay form for priced lines.
func renderCheckout(c echo.Context, status int, priced catalog.Priced, form views.CheckoutForm) error {
	return web.Render(c, status, views.Checkout(checkoutView(priced, form)))
}

func checkoutView(priced catalog.Priced, form views.CheckoutForm) views.CheckoutPage {
	return views.CheckoutPage{
		Lines: viewLines(priced.Lines, priced.Currency),
		Total: views.Money(priced.Amount, priced.Currency),
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
