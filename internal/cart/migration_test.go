package cart_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"exactlyonce/internal/pgtest"
	"exactlyonce/migrations"
)

// TestMigrationKeepsShoppersCarts: the migration to versioned carts turns
// each shopper's cart lines so far into an open browser cart, and its Down
// gives them back.
func TestMigrationKeepsShoppersCarts(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 3); err != nil {
		t.Fatalf("down to 3: %v", err)
	}
	// Test SQL against the schema before the migration (the catalog's
	// seed is written for today's schema, not this one's).
	_, err = pool.Exec(ctx, `
		INSERT INTO products (sku, name, price, currency) VALUES
			('mug-espresso', 'Espresso mug', 1200, 'eur'), ('book-retries', 'Field guide to retries', 3450, 'eur');
		INSERT INTO customers (id) VALUES ('0190d5f0-0000-7000-8000-000000000001'), ('0190d5f0-0000-7000-8000-000000000002');
		INSERT INTO cart_items (customer_id, sku, quantity) VALUES
			('0190d5f0-0000-7000-8000-000000000001', 'mug-espresso', 2),
			('0190d5f0-0000-7000-8000-000000000001', 'book-retries', 1),
			('0190d5f0-0000-7000-8000-000000000002', 'mug-espresso', 5)`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	var carts, lines, five int
	err = pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM carts WHERE browser AND order_id IS NULL),
		(SELECT count(*) FROM cart_lines), (SELECT count(*) FROM cart_lines WHERE quantity = 5)`).Scan(&carts, &lines, &five)
	if err != nil {
		t.Fatal(err)
	}
	if carts != 2 || lines != 3 || five != 1 {
		t.Errorf("got %d open browser carts, %d lines (%d of 5), want 2, 3 (1)", carts, lines, five)
	}
	if _, err := p.DownTo(ctx, 3); err != nil {
		t.Fatalf("down again: %v", err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM cart_items`).Scan(&lines); err != nil || lines != 3 {
		t.Errorf("after Down: got %d cart_items (%v), want 3", lines, err)
	}
}

// TestReconciliationDownDropsItsEvents: the Down of the reconciliation
// migration restores the older check on key_events, which the "refunded"
// and "parked" events it introduced would fail; it deletes them first.
func TestReconciliationDownDropsItsEvents(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `INSERT INTO key_events (customer_id, key, event) VALUES
		(gen_random_uuid(), 'k', 'claimed'), (gen_random_uuid(), 'k', 'refunded'), (gen_random_uuid(), 'k', 'parked')`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatalf("down to 11: %v", err)
	}
	var events []string
	rows, err := pool.Query(ctx, `SELECT event FROM key_events ORDER BY event`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0] != "claimed" {
		t.Errorf("after Down: got events %v, want [claimed]", events)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
