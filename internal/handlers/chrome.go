package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// pageChrome gives every page's request the frame state the layout shows
// (views.Chrome): whether the lab is on, and room for the cart's count,
// which the handlers that read the cart fill in (countCart).
func (h *Handler) pageChrome(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		c.SetRequest(r.WithContext(views.WithChrome(r.Context(), &views.Chrome{Lab: h.demo != nil})))
		return next(c)
	}
}

// countCart puts how many things the cart holds on the page's Cart link.
func countCart(c echo.Context, items []catalog.Item) {
	ch, ok := views.ChromeOf(c.Request().Context())
	if !ok {
		return
	}
	ch.CartCount = 0
	for _, it := range items {
		ch.CartCount += it.Quantity
	}
}

// readCartCount reads the shopper's cart for its count, on a page that
// does not read the cart otherwise. A visitor without a session has none,
// and costs no query.
func (h *Handler) readCartCount(c echo.Context) error {
	id, ok := shopper(c)
	if !ok {
		return nil
	}
	cart, _, err := h.carts.Browser(c.Request().Context(), id)
	if err != nil {
		return err
	}
	countCart(c, cart.Items)
	return nil
}

// countCartOnError fills the Cart link's count on the error page a
// request ends on (a refused form, a 404), which its handler, having
// failed, did not fill: the page would say "Cart" with things in it. Not
// on a refusal for load (429) nor a server error, where one more query
// is the wrong thing to do, and the count is missed, not wrong.
func (h *Handler) countCartOnError(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil || c.Response().Committed {
			return err
		}
		if status := errorStatus(err); status < http.StatusInternalServerError && status != http.StatusTooManyRequests {
			// The error page goes out without its count if this fails.
			_ = h.readCartCount(c)
		}
		return err
	}
}

// errorStatus is the status the error page of err is sent with.
func errorStatus(err error) int {
	if pe, ok := errors.AsType[*web.PageError](err); ok {
		return pe.Status
	}
	return web.Classify(err).Kind.Status
}
