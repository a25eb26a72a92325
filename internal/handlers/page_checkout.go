package handlers

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// checkoutPage is GET /checkout: the order summary and the pay form, with
// the idempotency key of the cart's current version.
//
// Every render of one cart version carries the same key (it is kept with
// the cart), so a second tab, a refresh and a checkout reopened later all
// pay for the cart once. The page may also be kept in the browser's cache
// (private, revalidated on a normal visit): Back from the receipt shows this
// very form, and paying again replays the order. Its script asks the form
// key's status when the page is shown from a cache, and says the order is
// already paid, with its receipt, in place of a Pay button that works.
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
