-- name: ListCartItems :many
SELECT sku, quantity FROM cart_items WHERE customer_id = @customer_id ORDER BY sku;

-- name: SetCartQuantity :exec
-- Setting, not adding: the same request twice leaves the same cart.
INSERT INTO cart_items (customer_id, sku, quantity)
VALUES (@customer_id, @sku, @quantity)
ON CONFLICT (customer_id, sku) DO UPDATE SET quantity = EXCLUDED.quantity;

-- name: RemoveCartItem :exec
DELETE FROM cart_items WHERE customer_id = @customer_id AND sku = @sku;

-- name: RemoveCartItems :exec
-- Takes the lines of a placed order out of the cart. Only the ordered SKUs
-- go: a line added in another tab while the order ran stays.
DELETE FROM cart_items WHERE customer_id = @customer_id AND sku = ANY(@skus::text[]);
