// Package handlers is the HTTP face of the shop: the JSON API, the demo
// controls and the error handler that turns every returned error into a
// response. Handlers only translate between HTTP and the checkout engine;
// the order logic lives in package checkout.
package handlers

import (
	"log/slog"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/fakeprovider"
)

// Handler holds the dependencies of every route.
type Handler struct {
	db       *database.DB
	catalog  *catalog.Catalog
	checkout *checkout.Engine
	// provider is the fake payment provider, whose faults the demo
	// controls set; nil when demo mode is off.
	provider *fakeprovider.Provider
	log      *slog.Logger
}

// Deps are the dependencies New needs.
type Deps struct {
	DB       *database.DB
	Catalog  *catalog.Catalog
	Checkout *checkout.Engine
	// Provider enables the demo controls when non-nil.
	Provider *fakeprovider.Provider
	Log      *slog.Logger
}

// New returns a Handler.
func New(d Deps) *Handler {
	return &Handler{db: d.DB, catalog: d.Catalog, checkout: d.Checkout, provider: d.Provider, log: d.Log}
}
