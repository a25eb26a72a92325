package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// Register adds every route of the shop to e.
func (h *Handler) Register(e *echo.Echo) {
	e.HTTPErrorHandler = h.handleError
	e.Use(hostAllowList(h.allowedHosts))
	e.Use(securityHeaders())
	h.registerPages(e)

	// The API's routes answer their errors as problem+json, as the pages
	// answer theirs as HTML (pages_routes.go).
	api := newRouteSet(e, h.answersWith(writeProblem))
	e.RouteNotFound("/api/*", notFound, h.answersWith(writeProblem))
	api.add(http.MethodPost, "/api/customers", h.createCustomer)
	api.add(http.MethodGet, "/api/customers/me", h.getMe, h.requireCustomer)
	api.add(http.MethodGet, "/api/products", h.listProducts)

	orders, writes := h.limitWrites(limitedCustomer, true), h.limitWrites(limitedCustomer, false)
	api.add(http.MethodPost, "/api/orders", h.placeOrder, h.requireCustomer, orders)
	api.add(http.MethodGet, "/api/orders", h.listOrders, h.requireCustomer)
	api.add(http.MethodGet, "/api/orders/:id", h.getOrder, h.requireCustomer)

	api.add(http.MethodPut, "/api/carts/:id", h.putCart, h.requireCustomer, writes)
	api.add(http.MethodGet, "/api/carts/:id", h.getCart, h.requireCustomer)
	api.add(http.MethodPut, "/api/carts/:id/items/:sku", h.putCartItem, h.requireCustomer, writes)
	api.add(http.MethodDelete, "/api/carts/:id/items/:sku", h.deleteCartItem, h.requireCustomer)
	api.add(http.MethodPost, "/api/carts/:id/order", h.orderCart, h.requireCustomer, orders)

	api.add(http.MethodPost, "/api/pickups", h.reservePickupAPI, h.requireCustomer, writes, h.keyed())
	api.add(http.MethodGet, "/api/pickups/:id", h.getPickupAPI, h.requireCustomer)

	api.add(http.MethodGet, "/api/idempotency-policy", h.idempotencyPolicy)
	api.add(http.MethodGet, "/api/keys/:key/events", h.keyEvents, h.requireCustomer)
	api.add(http.MethodGet, "/api/openapi.json", h.openAPI)

	if h.provider != nil {
		api.add(http.MethodGet, "/api/demo/provider", h.getProviderBehaviour)
		api.add(http.MethodPut, "/api/demo/provider", h.setProviderBehaviour)
		api.add(http.MethodGet, "/api/demo/stats", h.demoStats)
	}
	api.refuseOtherMethods()

	e.GET("/problems/:slug", h.describeProblem)
	e.RouteNotFound("/problems/*", notFound)

	e.GET("/healthz", h.healthz)
	e.GET("/readyz", h.readyz)
}

// notFound answers a path no route serves; the route group's error mapping
// words it for its audience.
func notFound(echo.Context) error { return echo.ErrNotFound }
