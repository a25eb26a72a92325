package handlers

import (
	"net/http"
	"slices"

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
	p := newRouteSet(e, h.asPage)
	mw := []echo.MiddlewareFunc{middleware.BodyLimit(maxFormBytes), h.loadShopper, h.csrfProtection()}
	orders := append(slices.Clone(mw), h.limitWrites(limitedShopper, true))
	writes := append(slices.Clone(mw), h.limitWrites(limitedShopper, false))
	p.add(http.MethodGet, "/", h.catalogPage, mw...)
	p.add(http.MethodGet, "/cart", h.cartPage, mw...)
	p.add(http.MethodPost, "/cart", h.setCartQuantity, writes...)
	p.add(http.MethodGet, "/checkout", h.checkoutPage, mw...)
	p.add(http.MethodPost, "/checkout", h.submitCheckout, orders...)
	p.add(http.MethodGet, "/checkout/status", h.checkoutStatus, mw...)
	p.add(http.MethodGet, "/orders", h.ordersPage, mw...)
	p.add(http.MethodGet, "/orders/:id", h.receiptPage, mw...)
	p.add(http.MethodPost, "/signout", h.signOut, mw...)
	p.add(http.MethodGet, "/pickup", h.pickupPage, mw...)
	p.add(http.MethodPost, "/pickup", h.reservePickup, writes...)
	p.add(http.MethodGet, "/pickup/status", h.pickupStatus, mw...)
	p.add(http.MethodGet, "/pickup/:id", h.pickupReceipt, mw...)
	p.add(http.MethodGet, "/static/:name", h.asset)
	h.registerLab(p)
	p.refuseOtherMethods()
	// A path no route serves is a page a person mistyped, unless it is
	// under a machine client's group (which registers its own).
	e.RouteNotFound("/*", notFound, h.asPage)
}
