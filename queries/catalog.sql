-- name: ListProducts :many
SELECT sku, name, price, currency, description FROM products ORDER BY sku;

-- name: GetProducts :many
SELECT sku, name, price, currency, description FROM products WHERE sku = ANY(@skus::text[]);

-- name: SeedProduct :exec
-- Seeding is naturally idempotent: it adds missing products and leaves the
-- ones already there (and any price an operator changed) alone, except for
-- an empty description, which it fills (a database from before descriptions).
INSERT INTO products (sku, name, price, currency, description)
VALUES (@sku, @name, @price, @currency, @description)
ON CONFLICT (sku) DO UPDATE SET description = EXCLUDED.description
WHERE products.description = '' AND EXCLUDED.description <> '';
