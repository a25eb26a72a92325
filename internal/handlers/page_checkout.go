package handlers

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/fakeprovider"
	"exactlyonce/views"
)

// testCards are shown on the checkout page: the fake provider's card that
// succeeds and the one it always declines.
var testCards = []views.TestCard{
	{Number: groupDigits(defaultCard), Outcome: "succeeds", Succeeds: true},
	{Number: groupDigits(fakeprovider.DeclinedCard), Outcome: "is declined"},
}

// checkoutPage is GET /checkout: the order summary and the pay form, with
// an idempotency key minted for this rendering of the form.
//
// The page may be kept in the browser's cache (private, revalidated on a
// normal visit): Back from the receipt then shows this very form, key
// included, and paying again replays the order instead of placing a second.
// A normal visit renders a new form, with a new key, for a new order.
func (h *Handler) checkoutPage(c echo.Context) error {
	id, ok := shopper(c)
	if !ok {
		return seeOther(c, "/cart")
	}
	ctx := c.Request().Context()
	items, err := h.cartItems(ctx, id)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return seeOther(c, "/cart")
	}
	priced, err := h.catalog.Price(ctx, items)
	if err != nil {
		return err
	}
	key, sig, err := h.formKeys.Mint(id)
	if err != nil {
		return err
	}
	form := views.CheckoutForm{CSRF: csrfToken(c), Key: key, KeySig: sig, Items: formItems(items), Amount: priced.Amount}
	c.Response().Header().Set(echo.HeaderCacheControl, "private, no-cache")
	return renderCheckout(c, http.StatusOK, priced, form)
}

// renderCheckout renders the pay form for priced lines.
func renderCheckout(c echo.Context, status int, priced catalog.Priced, form views.CheckoutForm) error {
	return render(c, status, views.Checkout(views.CheckoutPage{
		Lines: viewLines(priced.Lines, priced.Currency),
		Total: views.Money(priced.Amount, priced.Currency),
		Form:  form,
		Cards: testCards,
	}))
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
