package checkout

import (
	"errors"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
)

// ErrCartChanged means the attempt names a cart version that is no longer
// the cart's, or one bound to another key: the cart changed (in another tab,
// by another request) after the form or the client read it. Nothing was
// stored; the client reads the cart again and decides. Place returns it as
// a *CartChangedError.
var ErrCartChanged = errors.New("the cart changed since it was read")

// CartChangedError is ErrCartChanged with the cart as the engine read it
// when it refused the attempt, for a page that shows it again at once: its
// current version, its lines and, when the catalog could price them, their
// price today. Neither the page nor a client has to read and price the cart
// a second time.
type CartChangedError struct {
	Now   CartVersion
	Items []catalog.Item
	// Priced is nil when the cart is empty or cannot be priced today.
	Priced *catalog.Priced
}

func (e *CartChangedError) Error() string { return ErrCartChanged.Error() }
func (e *CartChangedError) Unwrap() error { return ErrCartChanged }

// CartOrderedError means the cart has been ordered already, under another
// key; OrderID is that order. Nothing was stored or charged.
type CartOrderedError struct{ OrderID uuid.UUID }

func (e *CartOrderedError) Error() string { return "the cart has been ordered already" }

// PriceChangedError means a new key was sent with an expected amount that is
// not what the order costs now (prices changed since the page showed it).
// Nothing was stored: the shopper must not be charged an amount they did not
// see. Priced is the order at today's prices, for the page to show.
type PriceChangedError struct{ Priced catalog.Priced }

func (e *PriceChangedError) Error() string { return "the order's amount is not the one expected" }
