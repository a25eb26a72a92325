// Package handlers is the HTTP face of the shop: the JSON API, the browser
// pages (page_*.go, checkout_*.go), the demo controls, and the error
// answers. Every returned error is classified once against the error table
// of package problem (classify.go) and written by the renderer of the
// route group it was returned in: an HTML page for the browser face
// (pages_routes.go), problem+json for the API and every other route.
// Handlers only translate between HTTP and the checkout engine and the idem
// kit; the order logic lives in package checkout.
package handlers

import (
	"context"
	"crypto/sha256"
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
	"exactlyonce/internal/fakeprovider"
	"exactlyonce/internal/formkey"
	"exactlyonce/internal/lab"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/session"
)

// records is what the handlers read and write directly: customers, the
// orders and key events they list, the demo's counts and the readiness
// probe. The order flow's own reads and writes go through the engine.
// *database.DB is the implementation.
type records interface {
	CreateCustomer(ctx context.Context, arg db.CreateCustomerParams) error
	CustomerByTokenHash(ctx context.Context, tokenHash []byte) (db.CustomerByTokenHashRow, error)
	EnsureShopper(ctx context.Context, id uuid.UUID) error
	ShopperSignedOut(ctx context.Context, id uuid.UUID) (bool, error)
	SignOutShopper(ctx context.Context, id uuid.UUID) error
	GetOrder(ctx context.Context, arg db.GetOrderParams) (db.Order, error)
	ListOrders(ctx context.Context, arg db.ListOrdersParams) ([]db.Order, error)
	ListKeyEvents(ctx context.Context, arg db.ListKeyEventsParams) ([]db.ListKeyEventsRow, error)
	DemoStats(ctx context.Context) (db.DemoStatsRow, error)
	Ready(ctx context.Context) error
	// Loyalty points: a customer's balance, and what one order earned.
	PointsBalance(ctx context.Context, customerID uuid.UUID) (int64, error)
	OrderPoints(ctx context.Context, arg db.OrderPointsParams) (db.OrderPointsRow, error)
}

// Handler holds the dependencies of every route.
type Handler struct {
	db records
	// tokens remembers verified bearer tokens (auth.go), and liveShoppers
	// the shoppers known not to have signed out (shopper.go).
	tokens       *expirable.LRU[[sha256.Size]byte, uuid.UUID]
	liveShoppers *expirable.LRU[uuid.UUID, struct{}]
	catalog      *catalog.Catalog
	carts        *cart.Store
	checkout     *checkout.Engine
	// provider is the fake payment provider, whose faults the demo
	// controls set; nil when demo mode is off.
	provider *fakeprovider.Provider
	log      *slog.Logger
	// lifecycle is what the operations routes serve.
	lifecycle Lifecycle
	// sessions and formKeys serve the browser pages: the shopper's cookies
	// and the keys minted into checkout forms.
	sessions *session.Store
	formKeys *formkey.Signer
	// lab runs the double-click lab; nil when demo mode is off.
	lab *lab.Runner
	// allowedHosts are the Host names requests may be sent to.
	allowedHosts []string
	// newCustomers limits anonymous customers created per client address;
	// waiters caps the submits waiting per key (quota.go, waiters.go).
	newCustomers *addressQuota
	waiters      keyWaiters
	// writes limits what one customer and one address may store
	// (write_limits.go).
	writes  *writeLimiter
	metrics *metrics.Metrics
	// pickupFlow and pickups serve the pickup slot form (page_pickup.go).
	pickupFlow *idemecho.Form
	pickupKeys *idem.Store
	pickups    pickups
}

// Deps are the dependencies New needs.
type Deps struct {
	DB       *database.DB
	Catalog  *catalog.Catalog
	Carts    *cart.Store
	Checkout *checkout.Engine
	// Provider enables the demo controls when non-nil.
	Provider *fakeprovider.Provider
	Log      *slog.Logger
	// Lifecycle is the key retention policy and the metrics, served by
	// the operations routes (health.go, policy.go).
	Lifecycle Lifecycle
	// Sessions and FormKeys are the browser shop's signed cookies and
	// checkout form keys.
	Sessions *session.Store
	FormKeys *formkey.Signer
	// Lab enables the double-click lab (/lab) when non-nil.
	Lab *lab.Runner
	// AllowedHosts are the names (host or host:port) the server answers
	// for; a request for any other Host is refused (hosts.go).
	AllowedHosts []string
	// CustomerQuota limits the anonymous customers (API customers and
	// browser shoppers) one client address may create; zero is the default.
	CustomerQuota CustomerQuota
	// WriteLimits bound what one customer and one address may store; zero
	// fields are the defaults (DefaultWriteLimits).
	WriteLimits WriteLimits
	// Metrics counts the quotas' refusals and the waiting submits.
	Metrics *metrics.Metrics
	// Keys and Forms are the idem kit's key store and form keys, which
	// protect the pickup slot form; Pickups reads its reservations.
	Keys    *idem.Store
	Pickups pickups
	// FormSecret signs the kit's form keys and FormTTL bounds their age.
	FormSecret []byte
	FormTTL    time.Duration
}

// New returns a Handler.
func New(d Deps) *Handler {
	return &Handler{db: d.DB, tokens: newTokenCache(), liveShoppers: newShopperCache(), catalog: d.Catalog, carts: d.Carts, checkout: d.Checkout, provider: d.Provider, log: d.Log,
		lifecycle: d.Lifecycle, sessions: d.Sessions, formKeys: d.FormKeys,
		lab: d.Lab, allowedHosts: d.AllowedHosts,
		newCustomers: newAddressQuota(d.CustomerQuota), writes: newWriteLimiter(d.WriteLimits), metrics: d.Metrics, pickups: d.Pickups,
		pickupFlow: newPickupForm(d), pickupKeys: d.Keys}
}
