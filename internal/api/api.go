// Package api is the shop's JSON API (docs/api.md, api/openapi.json): API
// customers with bearer tokens, orders and carts through the checkout
// engine, the pickup reservations under the idem kit's middleware, the key
// trail, the probes and the documentation of problem types. Its errors are
// answered as problem+json by the shared error table (internal/web); the
// browser pages are internal/handlers'.
package api

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"

	"github.com/google/uuid"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"exactlyonce/idem"
	"exactlyonce/internal/cart"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/pickup"
	"exactlyonce/internal/readiness"
	"exactlyonce/internal/refund"
	"exactlyonce/internal/web"
)

// records is what the API reads and writes directly: customers, orders,
// the audit trail. The order
// flow's own reads and writes go through the engine. *database.DB is the
// implementation.
type records interface {
	CreateCustomer(ctx context.Context, arg db.CreateCustomerParams) error
	CustomerByTokenHash(ctx context.Context, tokenHash []byte) (db.CustomerByTokenHashRow, error)
	GetOrder(ctx context.Context, arg db.GetOrderParams) (db.Order, error)
	ListOrders(ctx context.Context, arg db.ListOrdersParams) ([]db.Order, error)
	ListKeyEvents(ctx context.Context, arg db.ListKeyEventsParams) ([]db.ListKeyEventsRow, error)
	PointsBalance(ctx context.Context, customerID uuid.UUID) (int64, error)
	OrderPoints(ctx context.Context, arg db.OrderPointsParams) (db.OrderPointsRow, error)
	RefundsOfOrder(ctx context.Context, arg db.RefundsOfOrderParams) ([]db.OrderRefund, error)
}

// pickups is the pickup reservations' store; *pickup.Store is the
// implementation.
type pickups interface {
	Get(ctx context.Context, visitor, id string) (pickup.Reservation, error)
	ReserveFinishing(ctx context.Context, l *idem.Lock, visitor, slot, name string, answer func(id uuid.UUID) idem.Response) (idem.Response, error)
}

// Handler holds the dependencies of the API's routes.
type Handler struct {
	db records
	// tokens remembers verified bearer tokens (auth.go).
	tokens   *expirable.LRU[[sha256.Size]byte, uuid.UUID]
	catalog  *catalog.Catalog
	carts    *cart.Store
	checkout *checkout.Engine
	// demo mounts the demo's routes; nil when demo mode is off.
	demo       func(api *web.RouteSet)
	log        *slog.Logger
	lifecycle  Lifecycle
	errors     *web.Errors
	limits     *web.Limits
	pickupKeys *idem.Store
	pickups    pickups
	ready      http.Handler
	refunds    *refund.Service
}

// Deps are the dependencies New needs.
type Deps struct {
	DB       *database.DB
	Catalog  *catalog.Catalog
	Carts    *cart.Store
	Checkout *checkout.Engine
	// Demo, when not nil, mounts the demo's routes (/api/demo/...) among
	// the API's: the app sets it with DEMO=1. The API knows nothing else of
	// the demo.
	Demo func(api *web.RouteSet)
	Log  *slog.Logger
	// Lifecycle is the key retention policy (policy.go).
	Lifecycle Lifecycle
	// Errors answers the routes' errors, and Limits are the quotas and
	// write limits, both shared with the pages.
	Errors *web.Errors
	Limits *web.Limits
	// Keys is the idem kit's key store of the pickup reservations, and
	// Pickups their store.
	Keys    *idem.Store
	Pickups pickups
	// Ready answers GET /readyz (internal/readiness).
	Ready *readiness.Checker
	// Refunds runs the customers' cancels (POST /api/orders/{id}/cancel).
	Refunds *refund.Service
}

// New returns the API's handler.
func New(d Deps) *Handler {
	return &Handler{db: d.DB, tokens: newTokenCache(), catalog: d.Catalog, carts: d.Carts, checkout: d.Checkout,
		demo: d.Demo, log: d.Log, lifecycle: d.Lifecycle, errors: d.Errors, limits: d.Limits,
		pickupKeys: d.Keys, pickups: d.Pickups, ready: d.Ready, refunds: d.Refunds}
}
