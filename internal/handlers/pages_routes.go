package handlers

import (
	"net/http"
	"slices"
	"strings"

	"exactlyonce/idem/idemhttp"
	"exactlyonce/internal/web"
	"exactlyonce/static"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// maxFormBytes bounds a page's form; the largest, a pay form, is well
// under a kilobyte.
const maxFormBytes = "64K"

// Register adds the browser shop to e. Every page route reads the session
// and is guarded against forgery; the middleware is given per route rather
// than through a group, because a group with an empty prefix would catch
// every unknown path, the API's included.
func (h *Handler) Register(e *echo.Echo) {
	p := web.NewRouteSet(e, h.errors.Page)
	mw := []echo.MiddlewareFunc{middleware.BodyLimit(maxFormBytes), h.loadShopper, h.csrfProtection(), h.pageChrome, h.countCartOnError}
	orders := append(slices.Clone(mw), h.limits.Writes(limitedShopper, true, h.checkoutWriteKey))
	writes := append(slices.Clone(mw), h.limits.Writes(limitedShopper, false, nil))
	pickups := append(slices.Clone(mw), h.limits.Writes(limitedShopper, false, h.pickupWriteKey))
	p.Add(http.MethodGet, "/", h.catalogPage, mw...)
	p.Add(http.MethodGet, "/cart", h.cartPage, mw...)
	p.Add(http.MethodPost, "/cart", h.setCartQuantity, writes...)
	p.Add(http.MethodGet, "/checkout", h.checkoutPage, mw...)
	p.Add(http.MethodPost, "/checkout", h.submitCheckout, orders...)
	p.Add(http.MethodGet, "/checkout/status", h.checkoutStatus, mw...)
	// The way back from the shopper's bank settles the order (a provider
	// call): counted as a write, so that it cannot be hammered.
	p.Add(http.MethodGet, "/checkout/return", h.checkoutReturn, writes...)
	p.Add(http.MethodGet, "/orders", h.ordersPage, mw...)
	p.Add(http.MethodGet, "/orders/:id", h.receiptPage, mw...)
	cancels := append(slices.Clone(mw), h.limits.Writes(limitedShopper, false, h.cancelWriteKey))
	p.Add(http.MethodPost, "/orders/:id/cancel", h.cancelOrder, cancels...)
	p.Add(http.MethodPost, "/signout", h.signOut, mw...)
	p.Add(http.MethodGet, "/pickup", h.pickupPage, mw...)
	p.Add(http.MethodPost, "/pickup", h.reservePickup, pickups...)
	p.Add(http.MethodGet, "/pickup/status", h.pickupStatus, mw...)
	p.Add(http.MethodGet, "/pickup/:id", h.pickupReceipt, mw...)
	p.Add(http.MethodGet, "/static/:name", echo.WrapHandler(static.Shop))
	p.Add(http.MethodGet, "/static/idem/:name", echo.WrapHandler(static.Kit))
	if h.demo != nil {
		h.demo(p, middleware.BodyLimit(maxFormBytes), h.csrfProtection())
	}
	p.RefuseOtherMethods()
	// A path no route serves is a page a person mistyped, unless it is
	// under a machine client's group (which registers its own).
	// It shows the shopper's cart count, as every page does.
	e.RouteNotFound("/*", notFound, h.errors.Page, h.loadShopper, h.pageChrome, h.countCartOnError)
}

// notFound answers a path no route serves, worded by the route group's
// error renderer for its audience.
func notFound(echo.Context) error { return echo.ErrNotFound }

// limitedShopper names the browser shopper, or else the pickup visitor, of
// a page's request, for the write limits (web.Limits.Writes). A request
// with neither (a form posted without a session) is limited by its address
// alone, under one name.
func limitedShopper(c echo.Context) string {
	if id, ok := shopper(c); ok {
		return "shopper:" + id.String()
	}
	if t := csrfToken(c); t != "" {
		return "visitor:" + visitor(c)
	}
	return "anonymous"
}

// checkoutWriteKey names the key of a pay form as the checkout engine keeps
// it, scoped to the shopper, and pickupWriteKey that of a pickup form as
// the kit keeps it, scoped to the visitor, for the write limits: a form
// sent again with its key (the outage page's retry, a refresh) is a retry,
// which a limit on new writes never refuses (issue 33). Neither checks the
// key's signature: the lookup is scoped to the sender, so a made-up key
// finds only the sender's own, and the handler checks it before anything
// is stored.
func (h *Handler) checkoutWriteKey(c echo.Context) web.WriteKey {
	id, ok := shopper(c)
	if !ok {
		return web.WriteKey{}
	}
	return web.WriteKey{Store: h.checkout.Keys(), Scope: id.String(), Key: strings.TrimSpace(c.FormValue(formKeyField))}
}

func (h *Handler) cancelWriteKey(c echo.Context) web.WriteKey {
	id, _ := shopper(c)
	return web.WriteKey{Store: h.refunds.Keys(), Scope: id.String(), Key: idemhttp.FormKeyOf(c.Request()).Key}
}

// pickupWriteKey names the pickup form's key (see checkoutWriteKey).
func (h *Handler) pickupWriteKey(c echo.Context) web.WriteKey {
	return web.WriteKey{Store: h.pickupKeys, Scope: visitor(c), Key: idemhttp.FormKeyOf(c.Request()).Key}
}
