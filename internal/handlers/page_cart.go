package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// cartPage is GET /cart: the cart priced from the catalog. ?done=added
// (removed, updated) with ?sku= says what the form just sent did.
func (h *Handler) cartPage(c echo.Context) error {
	ctx := c.Request().Context()
	flash, err := h.cartFlash(c)
	if err != nil {
		return err
	}
	page := views.CartPage{Flash: flash, CSRF: csrfToken(c), MaxQuantity: catalog.MaxQuantity}
	id, ok := shopper(c)
	if !ok {
		return web.Render(c, http.StatusOK, views.Cart(page))
	}
	cart, _, err := h.carts.Browser(ctx, id)
	if err != nil {
		return err
	}
	countCart(c, cart.Items)
	if len(cart.Items) == 0 {
		return web.Render(c, http.StatusOK, views.Cart(page))
	}
	priced, err := h.catalog.Price(ctx, cart.Items)
	if err != nil {
		return fmt.Errorf("price cart: %w", err)
	}
	page.Lines = viewLines(priced.Lines, priced.Currency)
	page.Total = views.Money{Minor: priced.Amount, Currency: priced.Currency}
	return web.Render(c, http.StatusOK, views.Cart(page))
}

// setCartQuantity is POST /cart with sku and quantity: it sets the line to
// that quantity, and removes it at 0. Setting rather than adding is what
// makes a double-click or a resent form harmless here without any key.
func (h *Handler) setCartQuantity(c echo.Context) error {
	ctx := c.Request().Context()
	sku := strings.TrimSpace(c.FormValue("sku"))
	_, known, err := h.catalog.Lookup(ctx, sku)
	if err != nil {
		return err
	}
	if !known {
		return &web.PageError{Status: http.StatusBadRequest, Title: "Unknown product",
			Message: "The shop does not sell that product. Your cart was not changed.", Action: web.BackToShop}
	}
	qty, err := strconv.Atoi(strings.TrimSpace(c.FormValue("quantity")))
	if err != nil || qty < 0 || qty > catalog.MaxQuantity {
		return &web.PageError{Status: http.StatusBadRequest, Title: "Invalid quantity",
			Message: fmt.Sprintf("A quantity must be a whole number from 0 to %d. Your cart was not changed.", catalog.MaxQuantity),
			Action:  web.BackToCart}
	}
	id, err := h.ensureShopper(c)
	if err != nil {
		return err
	}
	if err := h.carts.SetBrowserLine(ctx, id, sku, qty); err != nil {
		return fmt.Errorf("set cart quantity: %w", err)
	}
	next := url.URL{Path: "/cart"}
	if done := c.FormValue("done"); cartDone[done] != "" {
		next.RawQuery = url.Values{"done": {done}, "sku": {sku}}.Encode()
	}
	if c.FormValue("done") == "added" {
		// The catalog's add button brings the shopper back where they
		// were, at the product, as a shop does that expects more than one
		// thing bought: the cart is a link away (the header's count, the
		// note's View cart), and a jump there would make every further
		// product a trip back. With JavaScript the page never leaves.
		next.Path, next.Fragment = "/", "product-"+sku
	}
	return web.SeeOther(c, next.String())
}

// cartDone words what a cart form did, by the form's done field: the
// catalog's add button (said on the catalog), the cart's update and remove
// buttons.
var cartDone = map[string]string{
	"added":   "Added %s to your cart.",
	"updated": "Updated the quantity of %s.",
	"removed": "Removed %s from your cart.",
}

// cartFlash is the note the cart page opens with after a cart form, named
// by ?done= and ?sku=; "" for none, or for a product the shop does not
// sell. Only words of the shop's own make it onto the page.
func (h *Handler) cartFlash(c echo.Context) (string, error) {
	format := cartDone[c.QueryParam("done")]
	if format == "" {
		return "", nil
	}
	p, known, err := h.catalog.Lookup(c.Request().Context(), c.QueryParam("sku"))
	if err != nil || !known {
		return "", err
	}
	return fmt.Sprintf(format, p.Name), nil
}
