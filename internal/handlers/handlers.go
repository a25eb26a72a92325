// Package handlers is the browser face of the shop: the catalog, the cart,
// the checkout form and its receipts (page_*.go, checkout_*.go), the pickup
// form, and the double-click lab when the demo is on. Every error a page
// returns is classified once against the error table (internal/web) and
// answered as an HTML page. Handlers only translate between HTTP and the
// checkout engine and the idem kit; the order logic lives in package
// checkout. The JSON API is internal/api's.
package handlers

import (
	"context"
	"github.com/labstack/echo/v4"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho"
	"exactlyonce/internal/cart"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/formkey"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/pickup"
	"exactlyonce/internal/refund"
	"exactlyonce/internal/session"
	"exactlyonce/internal/web"
)

// records is what the pages read and write directly: shoppers, their
// orders and their points. The order flow's own reads and writes go through
// the engine. *database.DB is the implementation.
type records interface {
	RefundsOfOrder(ctx context.Context, arg db.RefundsOfOrderParams) ([]db.OrderRefund, error)
	EnsureShopper(ctx context.Context, id uuid.UUID) error
	ShopperSignedOut(ctx context.Context, id uuid.UUID) (bool, error)
	SignOutShopper(ctx context.Context, id uuid.UUID) error
	GetOrder(ctx context.Context, arg db.GetOrderParams) (db.Order, error)
	ListOrders(ctx context.Context, arg db.ListOrdersParams) ([]db.Order, error)
	PointsBalance(ctx context.Context, customerID uuid.UUID) (int64, error)
	OrderPoints(ctx context.Context, arg db.OrderPointsParams) (db.OrderPointsRow, error)
}

// Handler holds the dependencies of the browser pages.
type Handler struct {
	db records
	// liveShoppers remembers the shoppers known not to have signed out
	// (shopper.go).
	liveShoppers *expirable.LRU[uuid.UUID, struct{}]
	catalog      *catalog.Catalog
	carts        *cart.Store
	checkout     *checkout.Engine
	settle       func(ctx context.Context, customer uuid.UUID, key string) (string, error)
	log          *slog.Logger
	// sessions and formKeys serve the pages: the shopper's cookies and the
	// keys minted into checkout forms.
	sessions *session.Store
	formKeys *formkey.Signer
	// demo mounts the demo's pages (the double-click lab); nil when demo
	// mode is off.
	demo    func(p *web.RouteSet, forms ...echo.MiddlewareFunc)
	errors  *web.Errors
	limits  *web.Limits
	metrics *metrics.Metrics
	// pickupFlow and pickups serve the pickup slot form (page_pickup.go).
	pickupFlow *idemecho.Form
	pickupKeys *idem.Store
	pickups    pickups
	// refunds and cancelKeys serve the order page's cancel form
	// (page_cancel.go).
	refunds    *refund.Service
	cancelKeys *idem.Forms
}

// pickups is the pickup reservations' store; *pickup.Store is the
// implementation.
type pickups interface {
	Get(ctx context.Context, visitor, id string) (pickup.Reservation, error)
}

// Deps are the dependencies New needs.
type Deps struct {
	DB       *database.DB
	Catalog  *catalog.Catalog
	Carts    *cart.Store
	Checkout *checkout.Engine
	// Settle settles an order's key now by its payment as the provider has
	// it (checkout.Completer.SettleKey): the return from the shopper's
	// bank (3-D Secure) does, rather than wait for the completer.
	Settle func(ctx context.Context, customer uuid.UUID, key string) (string, error)
	Log    *slog.Logger
	// Sessions and FormKeys are the shop's signed cookies and checkout
	// form keys.
	Sessions *session.Store
	FormKeys *formkey.Signer
	// Demo, when not nil, mounts the demo's pages (the double-click lab,
	// /lab) among the pages, behind the middleware that guards the shop's
	// forms: the app sets it with DEMO=1. The pages know nothing else of
	// the demo.
	Demo func(p *web.RouteSet, forms ...echo.MiddlewareFunc)
	// Errors answers the pages' errors, and Limits are the quotas and
	// write limits, both shared with the API.
	Errors *web.Errors
	Limits *web.Limits
	// Metrics counts the waiting submits.
	Metrics *metrics.Metrics
	// Keys is the idem kit's key store of the pickup form, Pickups its
	// reservations, FormSecret signs its keys and FormTTL bounds their age.
	Keys       *idem.Store
	Pickups    pickups
	FormSecret []byte
	FormTTL    time.Duration
	// Refunds runs the shoppers' cancels (page_cancel.go), whose form keys
	// are signed with FormSecret too.
	Refunds *refund.Service
}

// New returns the pages' handler.
func New(d Deps) *Handler {
	return &Handler{db: d.DB, liveShoppers: newShopperCache(), catalog: d.Catalog, carts: d.Carts, checkout: d.Checkout,
		settle: d.Settle, log: d.Log, sessions: d.Sessions, formKeys: d.FormKeys, demo: d.Demo,
		errors: d.Errors, limits: d.Limits, metrics: d.Metrics, pickups: d.Pickups, pickupFlow: newPickupForm(d),
		pickupKeys: d.Keys, refunds: d.Refunds, cancelKeys: idem.NewForms(d.FormSecret, d.FormTTL)}
}
