package cart

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
)

// Browser returns the shopper's open cart of the shop pages; ok is false
// when there is none (a new shopper, or one whose last cart was ordered).
func (s *Store) Browser(ctx context.Context, owner uuid.UUID) (c Cart, ok bool, err error) {
	row, err := s.db.OpenBrowserCart(ctx, owner)
	if errors.Is(err, database.ErrNotFound) {
		return Cart{}, false, nil
	}
	if err != nil {
		return Cart{}, false, fmt.Errorf("open browser cart: %w", err)
	}
	items, err := lines(ctx, s.db.Queries, row.ID)
	if err != nil {
		return Cart{}, false, err
	}
	return Cart{ID: row.ID, Version: row.Version, Items: items}, true, nil
}

// SetBrowserLine sets one line of the shopper's open browser cart, opening a
// new cart when there is none. A cart ordered between the look-up and the
// write (in another tab) is met as ErrOrdered, and the write goes to the
// shopper's new cart instead.
func (s *Store) SetBrowserLine(ctx context.Context, owner uuid.UUID, sku string, quantity int) error {
	if err := s.checkLine(ctx, sku, quantity); err != nil {
		return err
	}
	for range 3 {
		id, err := s.openBrowserCart(ctx, owner)
		if err != nil {
			return err
		}
		_, err = s.SetLine(ctx, owner, id, sku, quantity)
		if !errors.Is(err, ErrOrdered) {
			return err
		}
	}
	return errors.New("set browser cart line: the cart kept being ordered")
}

// openBrowserCart returns the id of the shopper's open browser cart,
// creating one if there is none.
func (s *Store) openBrowserCart(ctx context.Context, owner uuid.UUID) (uuid.UUID, error) {
	row, err := s.db.OpenBrowserCart(ctx, owner)
	if err == nil {
		return row.ID, nil
	}
	if !errors.Is(err, database.ErrNotFound) {
		return uuid.Nil, fmt.Errorf("open browser cart: %w", err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, fmt.Errorf("cart id: %w", err)
	}
	// Another tab may open one at the same moment: one insert wins, and
	// the read after it finds the winner either way.
	if err := s.db.CreateBrowserCart(ctx, db.CreateBrowserCartParams{ID: id, CustomerID: owner}); err != nil {
		return uuid.Nil, fmt.Errorf("create browser cart: %w", err)
	}
	row, err = s.db.OpenBrowserCart(ctx, owner)
	if err != nil {
		return uuid.Nil, fmt.Errorf("open browser cart: %w", err)
	}
	return row.ID, nil
}

// Checkout returns the shopper's cart as a checkout form shows it, with the
// idempotency key of its current version: the one already kept with the
// cart, or the one mint makes, kept from now on. Every render of one
// version, in any tab, so carries the same key, and paying twice is paying
// once. A kept key that no order used and that is older than unusedFor is
// replaced, so that the form lives long enough to be paid with.
func (s *Store) Checkout(ctx context.Context, owner, id uuid.UUID, minted string, unusedFor time.Duration) (c Cart, key string, err error) {
	err = s.db.InTx(ctx, func(q *db.Queries) error {
		row, err := q.CheckoutKey(ctx, db.CheckoutKeyParams{CartID: id, CustomerID: owner, Minted: minted, UnusedFor: unusedFor})
		if errors.Is(err, database.ErrNotFound) {
			return ErrNotFound // or ordered: either way, not a cart to pay for
		}
		if err != nil {
			return fmt.Errorf("checkout key: %w", err)
		}
		// CheckoutKey holds the cart's lock until commit: these lines are
		// the version's.
		items, err := lines(ctx, q, id)
		c, key = Cart{ID: id, Version: row.Version, Items: items}, row.OrderKey
		return err
	})
	return c, key, err
}

// OfOrder returns the cart an order of owner's was placed from; ok is false
// for an order placed without a cart (POST /api/orders).
func (s *Store) OfOrder(ctx context.Context, owner, orderID uuid.UUID) (id uuid.UUID, ok bool, err error) {
	id, err = s.db.CartOfOrder(ctx, db.CartOfOrderParams{CustomerID: owner, OrderID: &orderID})
	if errors.Is(err, database.ErrNotFound) {
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("cart of order: %w", err)
	}
	return id, true, nil
}
