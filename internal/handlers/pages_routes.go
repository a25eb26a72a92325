package handlers

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// maxFormBytes bounds a page's form; the largest, a pay form, is well
// under a kilobyte.
const maxFormBytes = "64K"

// registerPages adds the browser shop. Every page route reads the session
// and is guarded against forgery; the middleware is given per route rather
// than through a group, because a group with an empty prefix would catch
// every unknown path, the API's included.
func (h *Handler) registerPages(e *echo.Echo) {
	mw := []echo.MiddlewareFunc{h.asPage, middleware.BodyLimit(maxFormBytes), h.loadShopper, h.csrfProtection()}
	e.GET("/", h.catalogPage, mw...)
	e.GET("/cart", h.cartPage, mw...)
	e.POST("/cart", h.setCartQuantity, mw...)
	e.GET("/checkout", h.checkoutPage, mw...)
	e.POST("/checkout", h.submitCheckout, mw...)
	e.GET("/checkout/status", h.checkoutStatus, mw...)
	e.GET("/orders", h.ordersPage, mw...)
	e.GET("/orders/:id", h.receiptPage, mw...)
	e.GET("/pickup", h.pickupPage, mw...)
	e.POST("/pickup", h.reservePickup, mw...)
	e.GET("/pickup/status", h.pickupStatus, mw...)
	e.GET("/pickup/:id", h.pickupReceipt, mw...)
	e.GET("/static/:name", h.asset, h.asPage)
	// A path no route serves is a page a person mistyped, unless it is
	// under a machine client's group (which registers its own).
	e.RouteNotFound("/*", notFound, h.asPage)
}
