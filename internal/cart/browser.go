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

// BrowserCheckout returns the shopper's open browser cart as a checkout
// form shows it, with the idempotency key of its current version: the one
// already kept with the cart, or minted, kept from now on. Every render of
// one version, in any tab, so carries the same key, and paying twice is
// paying once. A kept key that no order used and that is older than
// unusedFor is replaced, so that the form lives long enough to be paid
// with. ok is false when there is nothing to pay for: no open cart, or an
// empty one, whose version keeps no key.
//
// It is one transaction: CheckoutKey locks the cart until commit, so the
// lines read after it are the version's.
func (s *Store) BrowserCheckout(ctx context.Context, owner uuid.UUID, minted string, unusedFor time.Duration) (c Cart, key string, ok bool, err error) {
	err = s.db.InTx(ctx, func(q *db.Queries) error {
		open, err := q.OpenBrowserCart(ctx, owner)
		if errors.Is(err, database.ErrNotFound) {
			return errNothingToPay
		}
		if err != nil {
			return fmt.Errorf("open browser cart: %w", err)
		}
		row, err := q.CheckoutKey(ctx, db.CheckoutKeyParams{CartID: open.ID, CustomerID: owner, Minted: minted, UnusedFor: unusedFor})
		if errors.Is(err, database.ErrNotFound) {
			return errNothingToPay // ordered (in another tab) since it was read
		}
		if err != nil {
			return fmt.Errorf("checkout key: %w", err)
		}
		rows, err := q.CartLines(ctx, open.ID)
		if err != nil {
			return fmt.Errorf("read cart lines: %w", err)
		}
		if len(rows) == 0 {
			return errNothingToPay // rolled back: an empty version keeps no key
		}
		c, key = Cart{ID: open.ID, Version: row.Version, Items: itemsOf(rows)}, row.OrderKey
		return nil
	})
	if errors.Is(err, errNothingToPay) {
		return Cart{}, "", false, nil
	}
	return c, key, err == nil, err
}

// KeepCheckoutKey is BrowserCheckout for a page that already has the
// cart's lines at version (the engine's refusal of a form for an older
// version carries them): it only keeps the key of that version, in one
// statement. ok is false when the cart is no longer open at version (it was
// changed again, or ordered), and the page has nothing current to show.
func (s *Store) KeepCheckoutKey(ctx context.Context, owner, cartID uuid.UUID, version int64, minted string, unusedFor time.Duration) (key string, ok bool, err error) {
	row, err := s.db.CheckoutKey(ctx, db.CheckoutKeyParams{CartID: cartID, CustomerID: owner, Minted: minted, UnusedFor: unusedFor})
	if errors.Is(err, database.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("checkout key: %w", err)
	}
	if row.Version != version {
		// The key was kept for a version whose lines the page does not
		// have; the next render of /checkout shows them with the same key.
		return "", false, nil
	}
	return row.OrderKey, true, nil
}

// errNothingToPay ends BrowserCheckout's transaction when the shopper has
// no cart to pay for.
var errNothingToPay = errors.New("no cart to pay for")

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
