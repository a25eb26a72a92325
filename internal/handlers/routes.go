package handlers

import "github.com/labstack/echo/v4"

// Register adds every route of the shop to e.
func (h *Handler) Register(e *echo.Echo) {
	e.HTTPErrorHandler = h.handleError
	e.Use(hostAllowList(h.allowedHosts))
	e.Use(securityHeaders())
	h.registerPages(e)
	h.registerLab(e)

	api := e.Group("/api")
	api.RouteNotFound("/*", notFound)
	api.POST("/customers", h.createCustomer)
	api.GET("/customers/me", h.getMe, h.requireCustomer)
	api.GET("/products", h.listProducts)

	orders := api.Group("/orders", h.requireCustomer)
	orders.POST("", h.placeOrder)
	orders.GET("", h.listOrders)
	orders.GET("/:id", h.getOrder)

	carts := api.Group("/carts", h.requireCustomer)
	carts.PUT("/:id", h.putCart)
	carts.GET("/:id", h.getCart)
	carts.PUT("/:id/items/:sku", h.putCartItem)
	carts.DELETE("/:id/items/:sku", h.deleteCartItem)
	carts.POST("/:id/order", h.orderCart)

	pickups := api.Group("/pickups", h.requireCustomer)
	pickups.POST("", h.reservePickupAPI, h.keyed())
	pickups.GET("/:id", h.getPickupAPI)

	api.GET("/idempotency-policy", h.idempotencyPolicy)
	api.GET("/keys/:key/events", h.keyEvents, h.requireCustomer)
	api.GET("/openapi.json", h.openAPI)

	if h.provider != nil {
		demo := api.Group("/demo")
		demo.GET("/provider", h.getProviderBehaviour)
		demo.PUT("/provider", h.setProviderBehaviour)
		demo.GET("/stats", h.demoStats)
	}

	e.GET("/problems/:slug", h.describeProblem)
	e.RouteNotFound("/problems/*", notFound)

	e.GET("/healthz", h.healthz)
	e.GET("/readyz", h.readyz)
}

// notFound answers a path no route serves; the route group's error mapping
// words it for its audience.
func notFound(echo.Context) error { return echo.ErrNotFound }
