package catalog

import (
	"context"
	"fmt"
	"strings"
)

// MaxQuantity bounds one line of a cart; more is surely a typo.
const MaxQuantity = 99

// MaxLines bounds the number of distinct products in one order.
const MaxLines = 50

// Item is a requested product and quantity, as a client sends it.
type Item struct {
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

// Line is a priced item.
type Line struct {
	SKU       string `json:"sku"`
	Name      string `json:"name"`
	Quantity  int    `json:"quantity"`
	UnitPrice int64  `json:"unit_price"`
	LineTotal int64  `json:"line_total"`
}

// Priced is a cart priced against the catalog.
type Priced struct {
	Lines    []Line
	Amount   int64
	Currency string
}

// InvalidCartError says what is wrong with a cart in words fit for the
// shopper or API client who sent it; Pointer, a JSON Pointer into an order
// body ("/items/0/sku"), says where, "/items" for the cart as a whole.
type InvalidCartError struct{ Reason, Pointer string }

func (e *InvalidCartError) Error() string { return e.Reason }

// Price checks items and prices them from the catalog. Repeated SKUs are
// merged, keeping the order of first appearance.
func (c *Catalog) Price(ctx context.Context, items []Item) (Priced, error) {
	if len(items) == 0 {
		return Priced{}, &InvalidCartError{"the cart is empty: items must list at least one product", "/items"}
	}
	var priced Priced
	index := map[string]int{}
	for i, it := range items {
		sku := strings.TrimSpace(it.SKU)
		if sku == "" {
			return Priced{}, &InvalidCartError{fmt.Sprintf("items[%d]: sku is required", i), fmt.Sprintf("/items/%d/sku", i)}
		}
		if it.Quantity < 1 || it.Quantity > MaxQuantity {
			return Priced{}, &InvalidCartError{fmt.Sprintf("items[%d]: quantity must be between 1 and %d, got %d", i, MaxQuantity, it.Quantity), fmt.Sprintf("/items/%d/quantity", i)}
		}
		p, ok, err := c.Lookup(ctx, sku)
		if err != nil {
			return Priced{}, err
		}
		if !ok {
			return Priced{}, &InvalidCartError{fmt.Sprintf("items[%d]: unknown sku %q", i, sku), fmt.Sprintf("/items/%d/sku", i)}
		}
		if priced.Currency == "" {
			priced.Currency = p.Currency
		} else if p.Currency != priced.Currency {
			return Priced{}, &InvalidCartError{"all products of one order must share a currency", fmt.Sprintf("/items/%d/sku", i)}
		}
		if j, seen := index[sku]; seen {
			l := &priced.Lines[j]
			l.Quantity += it.Quantity
			if l.Quantity > MaxQuantity {
				return Priced{}, &InvalidCartError{fmt.Sprintf("sku %q: total quantity must be at most %d", sku, MaxQuantity), fmt.Sprintf("/items/%d/quantity", i)}
			}
			l.LineTotal = int64(l.Quantity) * l.UnitPrice
			continue
		}
		if len(priced.Lines) == MaxLines {
			return Priced{}, &InvalidCartError{fmt.Sprintf("an order can hold at most %d different products", MaxLines), "/items"}
		}
		index[sku] = len(priced.Lines)
		priced.Lines = append(priced.Lines, Line{SKU: sku, Name: p.Name, Quantity: it.Quantity, UnitPrice: p.Price, LineTotal: int64(it.Quantity) * p.Price})
	}
	for _, l := range priced.Lines {
		priced.Amount += l.LineTotal
	}
	return priced, nil
}
