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

// cartRefusal says why ClaimOrderKey inserted nothing for a cart, reading
// the cart anew: nil when the cart would accept the key. A cart that changed
// is refused with itself as it is now, priced (CartChangedError).
func (e *Engine) cartRefusal(ctx context.Context, a Attempt) error {
	cart, err := e.db.RefusingCart(ctx, db.RefusingCartParams{ID: a.Cart.ID, CustomerID: a.CustomerID})
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
	case cart.Version == a.Cart.Version && (cart.OrderKey == nil || *cart.OrderKey == a.Key):
		return nil
	}
	refusal := &CartChangedError{Now: CartVersion{ID: cart.ID, Version: cart.Version}, Items: make([]catalog.Item, len(cart.Skus))}
	for i, sku := range cart.Skus {
		refusal.Items[i] = catalog.Item{SKU: sku, Quantity: int(cart.Quantities[i])}
	}
	if len(refusal.Items) > 0 {
		// A cart the catalog cannot price today (or not now) is still
		// refused as changed; its page sends the shopper to the cart.
		if priced, err := e.catalog.Price(ctx, refusal.Items); err == nil {
			refusal.Priced = &priced
		}
	}
	return refusal
}
