package checkout

import (
	"errors"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
)

// ErrCartChanged means the attempt names a cart version that is no longer
// the cart's, or one bound to another key: the cart changed (in another tab,
// by another request) after the form or the client read it. Nothing was
// stored; the client reads the cart again and decides.
var ErrCartChanged = errors.New("the cart changed since it was read")

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
