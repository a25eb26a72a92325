package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"

	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/outbox"
	"exactlyonce/internal/web"
)

// Demo is what a wrapper of the shop mounts on it: the double-click lab
// (demo/lab), which demo/cmd/demo serves and make run runs. The shop knows
// the demo only through this seam, so its own binary (cmd/web) links none
// of it.
type Demo interface {
	// Mount is called once, when the application is built, before its
	// engine and routes: what it returns is added to them.
	Mount(s DemoShop) Mounted
}

// DemoShop is what the shop gives a demo.
type DemoShop struct {
	// BaseURL is where the shop is reached over loopback.
	BaseURL string
	DB      *database.DB
	// LockTimeout and ProviderTimeout are the shop's.
	LockTimeout, ProviderTimeout time.Duration
	// AuthenticationWindow is the shop's (zero:
	// checkout.DefaultAuthenticationWindow), which the lab's abandoned
	// 3-D Secure scenario ages its shopper's wait past.
	AuthenticationWindow time.Duration
	// StripeAPIBase and StripeSecretKey reach the provider: the fake,
	// whose control API the demo sets faults through.
	StripeAPIBase, StripeSecretKey string
	// AdminURL is the admin listener's, when it keeps traces (for links
	// to a key's traces); empty otherwise.
	AdminURL string
	Log      *slog.Logger
}

// Mounted is what a demo adds to the shop.
type Mounted struct {
	// Hooks run in the engine before the shop's own (Config.Hooks).
	Hooks checkout.Hooks
	// AfterAward runs in the loyalty worker before the shop's own.
	AfterAward func(context.Context, *river.Job[outbox.LoyaltyArgs]) error
	// Middleware runs on every request of the shop's listener.
	Middleware []echo.MiddlewareFunc
	// Pages adds routes among the browser pages, behind the middleware
	// that guards the shop's forms; API adds routes among the API's.
	Pages func(p *web.RouteSet, forms ...echo.MiddlewareFunc)
	API   func(api *web.RouteSet)
	// Inspector is the path of the demo's page with the key inspector on
	// the shop (its #inspector, ?customer=… for a shopper), and Inspects
	// says whether a customer is one of the demo's shoppers, whose caught
	// mail the admin's /mail page links to it.
	Inspector string
	Inspects  func(ctx context.Context, customer uuid.UUID) bool
}
