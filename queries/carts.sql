-- Carts are versioned resources (migrations/00020_cart_versions.sql). Every
-- change of the lines runs in a transaction that first locks the cart with
-- LockCart and bumps its version only if the lines really changed, so a
-- write repeated leaves the cart, and its version, as the first one left it.

-- name: OpenBrowserCart :one
-- The shop pages' open cart of a shopper, if any.
SELECT id, version FROM carts
WHERE customer_id = @customer_id AND browser AND order_id IS NULL;

-- name: CreateBrowserCart :exec
-- Opens a browser cart for a shopper who has none open; two tabs doing so
-- at once make one (the partial unique index), the other insert does nothing.
INSERT INTO carts (id, customer_id, browser) VALUES (@id, @customer_id, true)
ON CONFLICT (customer_id) WHERE browser AND order_id IS NULL DO NOTHING;

-- name: CreateCart :execrows
-- Creates an API cart with the id the client chose. An id already taken,
-- by this customer or another, is left alone; LockCart tells them apart.
-- Run in the transaction that then locks the cart, so that of two requests
-- creating one cart the creator always goes first.
INSERT INTO carts (id, customer_id) VALUES (@id, @customer_id)
ON CONFLICT (id) DO NOTHING;

-- name: GetCart :one
-- A cart, scoped to its owner: another customer's cart is not found.
SELECT id, version, order_id, order_key FROM carts
WHERE id = @id AND customer_id = @customer_id;

-- name: RefusingCart :one
-- A cart as the claim that it refused reads it, in one snapshot: whether it
-- is ordered, its version and the key bound to it, and its lines at that
-- version, for the refusal to carry them (checkout.CartChangedError).
SELECT c.id, c.version, c.order_id, c.order_key,
       coalesce(array_agg(l.sku ORDER BY l.sku) FILTER (WHERE l.sku IS NOT NULL), '{}')::text[] AS skus,
       coalesce(array_agg(l.quantity ORDER BY l.sku) FILTER (WHERE l.sku IS NOT NULL), '{}')::int[] AS quantities
FROM carts c LEFT JOIN cart_lines l ON l.cart_id = c.id
WHERE c.id = @id AND c.customer_id = @customer_id
GROUP BY c.id;

-- name: LockCart :one
-- Locks a cart for a change of its lines, for the rest of the transaction.
SELECT id, version, order_id FROM carts
WHERE id = @id AND customer_id = @customer_id
FOR UPDATE;

-- name: CartLines :many
SELECT sku, quantity FROM cart_lines WHERE cart_id = @cart_id ORDER BY sku;

-- name: SetCartLine :execrows
-- Setting, not adding: the same request twice leaves the same cart. No row
-- is affected when the line already has that quantity.
INSERT INTO cart_lines (cart_id, sku, quantity)
VALUES (@cart_id, @sku, @quantity)
ON CONFLICT (cart_id, sku) DO UPDATE SET quantity = EXCLUDED.quantity
WHERE cart_lines.quantity <> EXCLUDED.quantity;

-- name: DeleteCartLine :execrows
DELETE FROM cart_lines WHERE cart_id = @cart_id AND sku = @sku;

-- name: DeleteCartLines :exec
DELETE FROM cart_lines WHERE cart_id = @cart_id;

-- name: InsertCartLines :exec
INSERT INTO cart_lines (cart_id, sku, quantity)
SELECT @cart_id, unnest(@skus::text[]), unnest(@quantities::int[]);

-- name: BumpCartVersion :one
-- A new version of the lines: the key minted for the old version no longer
-- pays for this cart, so a form or a client still holding it is told the
-- cart changed.
UPDATE carts SET version = version + 1, order_key = NULL, order_key_at = NULL
WHERE id = @id AND customer_id = @customer_id
RETURNING version;

-- name: CheckoutKey :one
-- The key of the checkout form for the cart's current version: the stored
-- one, or @minted when there is none. Every render of one version, in any
-- tab, gets the same key, so paying in two tabs is paying once. A stored key
-- that no order has used and that is older than @unused_for is replaced, so
-- that every rendered form lives long enough to be paid with (form keys
-- expire); a key some order has used is never replaced. The UPDATE locks the
-- cart for the rest of the transaction, so the lines read next are this
-- version's.
UPDATE carts c
SET order_key = CASE WHEN c.order_key IS NULL OR (c.order_key_at < now() - @unused_for::interval
        AND NOT EXISTS (SELECT FROM idem_keys_v1 k WHERE k.scope = c.customer_id::text AND k.key = c.order_key))
        THEN @minted::text ELSE c.order_key END,
    order_key_at = CASE WHEN c.order_key IS NULL OR (c.order_key_at < now() - @unused_for::interval
        AND NOT EXISTS (SELECT FROM idem_keys_v1 k WHERE k.scope = c.customer_id::text AND k.key = c.order_key))
        THEN now() ELSE c.order_key_at END
WHERE c.id = @cart_id AND c.customer_id = @customer_id AND c.order_id IS NULL
RETURNING c.version, c.order_key::text AS order_key;

-- name: CartOfOrder :one
-- The cart an order was placed from, if any.
SELECT id FROM carts WHERE customer_id = @customer_id AND order_id = @order_id;
