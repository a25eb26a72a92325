package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/web"
)

// Register adds the API's routes to e: everything under /api/, the
// problem types' documentation and the probes.
func (h *Handler) Register(e *echo.Echo) {
	// The API's routes answer their errors as problem+json, as the pages
	// answer theirs as HTML (internal/handlers).
	api := web.NewRouteSet(e, h.errors.With(web.WriteProblem))
	e.RouteNotFound("/api/*", notFound, h.errors.With(web.WriteProblem))
	api.Add(http.MethodPost, "/api/customers", h.createCustomer)
	api.Add(http.MethodGet, "/api/customers/me", h.getMe, h.requireCustomer)
	api.Add(http.MethodGet, "/api/products", h.listProducts)

	orders := h.limits.Writes(limitedCustomer, true, h.writeKey(h.checkout.Keys()))
	writes := h.limits.Writes(limitedCustomer, false, nil)
	api.Add(http.MethodPost, "/api/orders", h.placeOrder, h.requireCustomer, orders)
	api.Add(http.MethodGet, "/api/orders", h.listOrders, h.requireCustomer)
	api.Add(http.MethodGet, "/api/orders/:id", h.getOrder, h.requireCustomer)
	cancels := h.limits.Writes(limitedCustomer, false, h.writeKey(h.refunds.Keys()))
	api.Add(http.MethodPost, "/api/orders/:id/cancel", h.cancelOrder, h.requireCustomer, cancels)
	api.Add(http.MethodGet, "/api/orders/:id/refunds", h.listRefunds, h.requireCustomer)

	api.Add(http.MethodPut, "/api/carts/:id", h.putCart, h.requireCustomer, writes)
	api.Add(http.MethodGet, "/api/carts/:id", h.getCart, h.requireCustomer)
	api.Add(http.MethodPut, "/api/carts/:id/items/:sku", h.putCartItem, h.requireCustomer, writes)
	api.Add(http.MethodDelete, "/api/carts/:id/items/:sku", h.deleteCartItem, h.requireCustomer)
	api.Add(http.MethodPost, "/api/carts/:id/order", h.orderCart, h.requireCustomer, orders)

	pickups := h.limits.Writes(limitedCustomer, false, h.writeKey(h.pickupKeys))
	api.Add(http.MethodPost, "/api/pickups", h.reservePickupAPI, h.requireCustomer, pickups, h.keyed())
	api.Add(http.MethodGet, "/api/pickups/:id", h.getPickupAPI, h.requireCustomer)

	api.Add(http.MethodGet, "/api/idempotency-policy", h.idempotencyPolicy)
	api.Add(http.MethodGet, "/api/keys/:key/events", h.keyEvents, h.requireCustomer)
	api.Add(http.MethodGet, "/api/openapi.json", h.openAPI)

	if h.demo != nil {
		h.demo(api)
	}
	api.RefuseOtherMethods()

	e.GET("/problems/:slug", h.describeProblem)
	e.RouteNotFound("/problems/*", notFound)

	e.GET("/healthz", h.healthz)
	e.GET("/readyz", echo.WrapHandler(h.ready))
}

// limitedCustomer names the API customer of a request, for the write
// limits (web.Limits.Writes).
func limitedCustomer(c echo.Context) string { return "customer:" + customerID(c).String() }

// writeKey names the Idempotency-Key of an API request as keys holds it,
// scoped to the customer, for the write limits (web.Limits.Writes): a retry
// of a key that exists is never refused by a limit on new writes. A
// request without a well-formed key names none; its handler refuses it.
func (h *Handler) writeKey(keys *idem.Store) func(c echo.Context) web.WriteKey {
	return func(c echo.Context) web.WriteKey {
		key, err := parseIdempotencyKey(c.Request().Header.Values("Idempotency-Key"))
		if err != nil {
			return web.WriteKey{}
		}
		return web.WriteKey{Store: keys, Scope: customerID(c).String(), Key: key}
	}
}

// notFound answers a path no route serves; the route group's error mapping
// words it for its audience.
func notFound(echo.Context) error { return echo.ErrNotFound }
