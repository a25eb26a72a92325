package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// cartPage is GET /cart: the cart priced from the catalog.
func (h *Handler) cartPage(c echo.Context) error {
	page := views.CartPage{CSRF: csrfToken(c), MaxQuantity: catalog.MaxQuantity}
	id, ok := shopper(c)
	if !ok {
		return web.Render(c, http.StatusOK, views.Cart(page))
	}
	ctx := c.Request().Context()
	cart, _, err := h.carts.Browser(ctx, id)
	if err != nil {
		return err
	}
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
	return web.SeeOther(c, "/cart")
}
