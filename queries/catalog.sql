-- name: ListProducts :many
SELECT sku, name, price, currency FROM products ORDER BY sku;

-- name: GetProducts :many
SELECT sku, name, price, currency FROM products WHERE sku = ANY(@skus::text[]);

-- name: SeedProduct :exec
-- Seeding is naturally idempotent: it adds missing products and leaves the
-- ones already there (and any price an operator changed) alone.
INSERT INTO products (sku, name, price, currency)
VALUES (@sku, @name, @price, @currency)
ON CONFLICT (sku) DO NOTHING;
