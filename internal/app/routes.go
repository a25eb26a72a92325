package app

import (
	"slices"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/api"
	"exactlyonce/internal/cart"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/handlers"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/pickup"
	"exactlyonce/internal/readiness"
	"exactlyonce/internal/refund"
	"exactlyonce/internal/stripehook"
	"exactlyonce/internal/web"
)

// routes is what the two faces of the server are built from.
type routes struct {
	engine    *checkout.Engine
	completer *checkout.Completer
	refunds   *refund.Service
	catalog   *catalog.Catalog
	// demo is what Config.Demo mounted; zero without one.
	demo     Mounted
	keys     *idem.Store
	metrics  *metrics.Metrics
	ready    *readiness.Checker
	webhooks *stripehook.Handler
}

// register adds both faces of the server to e, the browser pages
// (internal/handlers) and the JSON API (internal/api), behind what they
// share: the Host allow-list, the security headers, one error table and
// one set of quotas and write limits.
func register(e *echo.Echo, d *database.DB, cfg Config, r routes) {
	errs := &web.Errors{Log: cfg.Log}
	limits := web.NewLimits(cfg.CustomerQuota, cfg.WriteLimits, r.metrics)
	e.HTTPErrorHandler = errs.Handle
	// The security headers first, so that the Host allow-list's 421
	// carries them too.
	e.Use(web.SecurityHeaders())
	e.Use(web.HostAllowList(append(slices.Clip(cfg.AllowedHosts), hostOf(cfg.BaseURL))))

	carts, pickups := cart.New(d, r.catalog), pickup.NewStore(d)
	pages := handlers.Deps{DB: d, Catalog: r.catalog, Carts: carts, Checkout: r.engine, Settle: r.completer.SettleKey, Log: cfg.Log,
		Errors: errs, Limits: limits, Metrics: r.metrics, Keys: r.keys, Pickups: pickups, Refunds: r.refunds}
	pages.Sessions, pages.FormKeys, pages.FormSecret, pages.FormTTL = browserSessions(cfg)
	machines := api.Deps{DB: d, Catalog: r.catalog, Carts: carts, Checkout: r.engine, Log: cfg.Log,
		Lifecycle: api.Lifecycle{Retention: cfg.KeyRetention}, Errors: errs, Limits: limits, Keys: r.keys, Pickups: pickups, Ready: r.ready, Refunds: r.refunds}
	// The demo's pages, routes and middleware (Config.Demo), mounted among
	// the shop's; the shop's handlers know nothing of them.
	for _, mw := range r.demo.Middleware {
		e.Use(mw)
	}
	pages.Demo, machines.Demo = r.demo.Pages, r.demo.API
	// The pages first: their catch-all 404 ("/*") yields to the API's
	// own ("/api/*") and to every route registered after it.
	handlers.New(pages).Register(e)
	api.New(machines).Register(e)
	// Stripe's own audience: signed by Stripe, not a shopper's session.
	r.webhooks.Register(e)
}
