// Package catalog is the product list the shop sells and the pricing of a
// cart against it. Prices are read on the server, never taken from a request.
//
// The catalog is held in memory and reloaded when older than a few seconds:
// it is small, changes rarely, and reading it on every order would add a
// database round trip to a path that is meant to cost two.
package catalog

import (
	"context"
	"fmt"
	"sync"
	"time"

	"exactlyonce/internal/db"
)

// Product is one thing for sale. Price is in minor units of Currency.
type Product struct {
	SKU      string `json:"sku"`
	Name     string `json:"name"`
	Price    int64  `json:"price"`
	Currency string `json:"currency"`
	// Description is one line of copy the catalog page shows under the
	// name; "" for none.
	Description string `json:"description,omitempty"`
}

// Source reads the catalog; *db.Queries satisfies it.
type Source interface {
	ListProducts(ctx context.Context) ([]db.Product, error)
	ListStock(ctx context.Context) ([]db.ListStockRow, error)
}

// Catalog is a cached view of the products table, safe for concurrent use.
type Catalog struct {
	src    Source
	maxAge time.Duration

	mu       sync.Mutex
	products []Product
	bySKU    map[string]Product
	loaded   time.Time
}

// New returns a catalog that rereads src when its copy is older than maxAge.
func New(src Source, maxAge time.Duration) *Catalog {
	return &Catalog{src: src, maxAge: maxAge}
}

// Products returns every product, ordered by SKU.
func (c *Catalog) Products(ctx context.Context) ([]Product, error) {
	if err := c.refresh(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.products, nil
}

// Left is what is left of each product that keeps stock (migration 00180),
// by SKU; a product not in it is made to order. It is read at each call,
// not cached with the products: every order moves it.
func (c *Catalog) Left(ctx context.Context) (map[string]int, error) {
	rows, err := c.src.ListStock(ctx)
	if err != nil {
		return nil, fmt.Errorf("read stock: %w", err)
	}
	left := make(map[string]int, len(rows))
	for _, r := range rows {
		left[r.Sku] = int(r.OnHand)
	}
	return left, nil
}

// Lookup returns the product with sku, if the catalog has it.
func (c *Catalog) Lookup(ctx context.Context, sku string) (Product, bool, error) {
	if err := c.refresh(ctx); err != nil {
		return Product{}, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.bySKU[sku]
	return p, ok, nil
}

// refresh reloads the catalog when it is stale. Holding the mutex across the
// query makes concurrent callers wait for one reload instead of each doing one.
func (c *Catalog) refresh(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bySKU != nil && time.Since(c.loaded) < c.maxAge {
		return nil
	}
	rows, err := c.src.ListProducts(ctx)
	if err != nil {
		return fmt.Errorf("load catalog: %w", err)
	}
	products := make([]Product, len(rows))
	bySKU := make(map[string]Product, len(rows))
	for i, r := range rows {
		products[i] = Product{SKU: r.Sku, Name: r.Name, Price: r.Price, Currency: r.Currency, Description: r.Description}
		bySKU[r.Sku] = products[i]
	}
	c.products, c.bySKU, c.loaded = products, bySKU, time.Now()
	return nil
}
