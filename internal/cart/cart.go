// Package cart keeps carts as versioned resources. Every change of a cart's
// lines is a set (never an add), made under the cart's row lock, and raises
// the version only when the lines really change, so that any write repeated
// leaves the cart and its version as the first one left them.
//
// The version is what an order pays for: the checkout engine claims a key
// for one (cart, version) and the statement that writes the order closes
// that cart (queries/orders.sql, FinishOrder). A shop page's cart is the
// shopper's open browser cart; once ordered, the next change opens a new one.
package cart

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
)

// Why a cart call was refused.
var (
	// ErrNotFound means there is no such cart for this customer: it does
	// not exist, or it belongs to someone else.
	ErrNotFound = errors.New("no such cart")
	// ErrOrdered means the cart has been ordered and is closed to changes.
	ErrOrdered = errors.New("the cart has been ordered")
)

// Cart is a cart as stored: its lines in SKU order, not priced.
type Cart struct {
	ID      uuid.UUID
	Version int64
	Items   []catalog.Item
	// OrderID is set once the cart has been ordered.
	OrderID *uuid.UUID
}

// Store reads and writes carts. It is safe for concurrent use.
type Store struct {
	db      *database.DB
	catalog *catalog.Catalog
}

// New returns a Store. The catalog is consulted to refuse unknown products.
func New(d *database.DB, cat *catalog.Catalog) *Store {
	return &Store{db: d, catalog: cat}
}

// Get returns owner's cart id.
func (s *Store) Get(ctx context.Context, owner, id uuid.UUID) (Cart, error) {
	row, err := s.db.GetCart(ctx, db.GetCartParams{ID: id, CustomerID: owner})
	if errors.Is(err, database.ErrNotFound) {
		return Cart{}, ErrNotFound
	}
	if err != nil {
		return Cart{}, fmt.Errorf("get cart: %w", err)
	}
	items, err := lines(ctx, s.db.Queries, id)
	if err != nil {
		return Cart{}, err
	}
	return Cart{ID: id, Version: row.Version, Items: items, OrderID: row.OrderID}, nil
}

// Replace creates owner's cart id with items, or replaces its lines. The id
// is the client's, so a repeated request finds the cart the first one made;
// an id taken by another customer is not found.
func (s *Store) Replace(ctx context.Context, owner, id uuid.UUID, items []catalog.Item) (Cart, error) {
	items, err := s.checkItems(ctx, items)
	if err != nil {
		return Cart{}, err
	}
	var created bool
	return s.change(ctx, owner, id, func(q *db.Queries) error {
		n, err := q.CreateCart(ctx, db.CreateCartParams{ID: id, CustomerID: owner})
		created = n == 1
		if err != nil {
			return fmt.Errorf("create cart: %w", err)
		}
		return nil
	}, func(q *db.Queries, current []catalog.Item) (bool, error) {
		if slices.Equal(current, items) {
			return false, nil
		}
		if err := q.DeleteCartLines(ctx, id); err != nil {
			return false, fmt.Errorf("delete cart lines: %w", err)
		}
		p := db.InsertCartLinesParams{CartID: id}
		for _, it := range items {
			p.Skus = append(p.Skus, it.SKU)
			p.Quantities = append(p.Quantities, int32(it.Quantity))
		}
		if err := q.InsertCartLines(ctx, p); err != nil {
			return false, fmt.Errorf("insert cart lines: %w", err)
		}
		// A new cart's first lines are its first version.
		return !created, nil
	})
}

// SetLine sets one line of owner's cart id to quantity; 0 removes it.
func (s *Store) SetLine(ctx context.Context, owner, id uuid.UUID, sku string, quantity int) (Cart, error) {
	if err := s.checkLine(ctx, sku, quantity); err != nil {
		return Cart{}, err
	}
	return s.change(ctx, owner, id, nil, func(q *db.Queries, _ []catalog.Item) (bool, error) {
		var (
			n   int64
			err error
		)
		switch {
		case quantity == 0 && !storableSKU(sku):
			// No line can hold this SKU (see storableSKU): there is no
			// such line, and PostgreSQL must not be asked for it.
			return false, nil
		case quantity == 0:
			n, err = q.DeleteCartLine(ctx, db.DeleteCartLineParams{CartID: id, Sku: sku})
		default:
			n, err = q.SetCartLine(ctx, db.SetCartLineParams{CartID: id, Sku: sku, Quantity: int32(quantity)})
		}
		if err != nil {
			return false, fmt.Errorf("set cart line: %w", err)
		}
		return n > 0, nil
	})
}

// change runs edit on the cart's current lines under the cart's row lock and
// raises the version when edit reports a change. before, when set, runs
// first in the same transaction.
func (s *Store) change(ctx context.Context, owner, id uuid.UUID, before func(q *db.Queries) error, edit func(q *db.Queries, current []catalog.Item) (bool, error)) (Cart, error) {
	var c Cart
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		if before != nil {
			if err := before(q); err != nil {
				return err
			}
		}
		row, err := q.LockCart(ctx, db.LockCartParams{ID: id, CustomerID: owner})
		if errors.Is(err, database.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("lock cart: %w", err)
		}
		if row.OrderID != nil {
			return ErrOrdered
		}
		current, err := lines(ctx, q, id)
		if err != nil {
			return err
		}
		changed, err := edit(q, current)
		if err != nil {
			return err
		}
		c = Cart{ID: id, Version: row.Version}
		if changed {
			if c.Version, err = q.BumpCartVersion(ctx, db.BumpCartVersionParams{ID: id, CustomerID: owner}); err != nil {
				return fmt.Errorf("bump cart version: %w", err)
			}
		}
		c.Items, err = lines(ctx, q, id)
		return err
	})
	return c, err
}

// checkItems validates a whole cart: known products, quantities from 1 to
// MaxQuantity, each SKU once. It returns the items in SKU order, as stored.
func (s *Store) checkItems(ctx context.Context, items []catalog.Item) ([]catalog.Item, error) {
	if len(items) > catalog.MaxLines {
		return nil, &catalog.InvalidCartError{Reason: fmt.Sprintf("a cart can hold at most %d different products", catalog.MaxLines)}
	}
	seen := map[string]bool{}
	out := make([]catalog.Item, 0, len(items))
	for i, it := range items {
		if seen[it.SKU] {
			return nil, &catalog.InvalidCartError{Reason: fmt.Sprintf("items[%d]: sku %q is listed twice", i, it.SKU)}
		}
		seen[it.SKU] = true
		if it.Quantity < 1 || it.Quantity > catalog.MaxQuantity {
			return nil, &catalog.InvalidCartError{Reason: fmt.Sprintf("items[%d]: quantity must be between 1 and %d, got %d", i, catalog.MaxQuantity, it.Quantity)}
		}
		if err := s.checkSKU(ctx, it.SKU); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b catalog.Item) int { return strings.Compare(a.SKU, b.SKU) })
	return out, nil
}

// checkLine validates one line as a set: 0 removes it, and removing a
// product the catalog no longer sells is allowed.
func (s *Store) checkLine(ctx context.Context, sku string, quantity int) error {
	if quantity < 0 || quantity > catalog.MaxQuantity {
		return &catalog.InvalidCartError{Reason: fmt.Sprintf("quantity must be between 0 and %d, got %d", catalog.MaxQuantity, quantity)}
	}
	if quantity == 0 {
		return nil
	}
	return s.checkSKU(ctx, sku)
}

// maxSKULength bounds a SKU taken from a request; no product's is longer.
const maxSKULength = 100

// storableSKU reports whether sku could name a product at all: valid UTF-8
// (PostgreSQL refuses anything else in a text column, as it refuses NUL) of
// at most maxSKULength bytes without control characters. A SKU from a path
// that is not one names no line and no product.
func storableSKU(sku string) bool {
	return len(sku) <= maxSKULength && utf8.ValidString(sku) &&
		!strings.ContainsFunc(sku, unicode.IsControl)
}

func (s *Store) checkSKU(ctx context.Context, sku string) error {
	if !storableSKU(sku) {
		return &catalog.InvalidCartError{Reason: fmt.Sprintf("unknown sku %q", sku)}
	}
	_, ok, err := s.catalog.Lookup(ctx, sku)
	if err != nil {
		return err
	}
	if !ok {
		return &catalog.InvalidCartError{Reason: fmt.Sprintf("unknown sku %q", sku)}
	}
	return nil
}

func lines(ctx context.Context, q *db.Queries, id uuid.UUID) ([]catalog.Item, error) {
	rows, err := q.CartLines(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read cart lines: %w", err)
	}
	return itemsOf(rows), nil
}

// itemsOf is a cart's lines as the catalog prices them.
func itemsOf(rows []db.CartLinesRow) []catalog.Item {
	items := make([]catalog.Item, len(rows))
	for i, r := range rows {
		items[i] = catalog.Item{SKU: r.Sku, Quantity: int(r.Quantity)}
	}
	return items
}
