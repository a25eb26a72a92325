package handlers

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/db"
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
		return h.nothingToPay(c, id)
	}
	countCart(c, shown.items)
	c.Response().Header().Set(echo.HeaderCacheControl, "private, no-cache")
	return web.Render(c, http.StatusOK, views.Checkout(checkoutView(shown.priced, shown.form)))
}

// nothingToPay answers a checkout with no cart to pay for. When the cart
// was just ordered (the shopper has no open cart, and their last order,
// placed from a cart within a form's lifetime, is what a checkout page
// still shown may have paid for: Back from the receipt, re-requested), the
// page says it is already paid and links the receipt, rather than show
// an empty cart the shopper might take for a failed payment. Otherwise,
// the cart.
func (h *Handler) nothingToPay(c echo.Context, id uuid.UUID) error {
	ctx := c.Request().Context()
	if _, open, err := h.carts.Browser(ctx, id); err != nil || open {
		if err != nil {
			return err
		}
		return web.SeeOther(c, "/cart")
	}
	rows, err := h.db.ListOrders(ctx, db.ListOrdersParams{CustomerID: id, MaxRows: 1})
	if err != nil {
		return fmt.Errorf("list orders: %w", err)
	}
	if len(rows) == 0 || time.Since(rows[0].CreatedAt) > h.formKeys.TTL() {
		return web.SeeOther(c, "/cart")
	}
	if _, fromCart, err := h.carts.OfOrder(ctx, id, rows[0].ID); err != nil || !fromCart {
		if err != nil {
			return err
		}
		return web.SeeOther(c, "/cart")
	}
	return web.Render(c, http.StatusOK, views.AlreadyPaid(views.AlreadyPaidPage{ReceiptURL: "/orders/" + rows[0].ID.String()}))
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
