package checkout

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
)

// CartVersion names the cart version an order pays for. The claim of a new
// key succeeds only while the cart is open at that version and the version
// is bound to no other key, and the finish closes the cart: one cart version
// is charged at most once, whatever keys its forms and clients send.
type CartVersion struct {
	ID      uuid.UUID
	Version int64
}

// cartRefusal says why ClaimOrderKey inserted nothing for a cart, reading the cart
// anew: nil when the cart would accept the key.
func (e *Engine) cartRefusal(ctx context.Context, a Attempt) error {
	cart, err := e.db.GetCart(ctx, db.GetCartParams{ID: a.Cart.ID, CustomerID: a.CustomerID})
	if errors.Is(err, database.ErrNotFound) {
		// Carts are never deleted and their owner never changes: the
		// caller named a cart that is not this customer's.
		return fmt.Errorf("cart %s: %w", a.Cart.ID, database.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read cart: %w", err)
	}
	switch {
	case cart.OrderID != nil:
		return &CartOrderedError{OrderID: *cart.OrderID}
	case cart.Version != a.Cart.Version, cart.OrderKey != nil && *cart.OrderKey != a.Key:
		return e.cartChanged(ctx, CartVersion{ID: cart.ID, Version: cart.Version})
	}
	return nil
}

// cartChanged is the refusal of an attempt for a cart that is now at
// version now: the cart's lines, read after its version (so lines newer
// than the version can be read, never older: a form made of them names a
// version the claim refuses, and is answered again), priced today.
func (e *Engine) cartChanged(ctx context.Context, now CartVersion) error {
	rows, err := e.db.CartLines(ctx, now.ID)
	if err != nil {
		return fmt.Errorf("read cart lines: %w", err)
	}
	refusal := &CartChangedError{Now: now, Items: make([]catalog.Item, len(rows))}
	for i, r := range rows {
		refusal.Items[i] = catalog.Item{SKU: r.Sku, Quantity: int(r.Quantity)}
	}
	if len(rows) > 0 {
		if priced, err := e.catalog.Price(ctx, refusal.Items); err == nil {
			refusal.Priced = &priced
		}
	}
	return refusal
}
