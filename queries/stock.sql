-- name: ListStock :many
-- What is left of every product that keeps stock, for the catalog.
SELECT sku, on_hand FROM stock ORDER BY sku;

-- name: ReceiveStock :one
-- Stock received for a product: on hand and received both go up by
-- @quantity; a product that kept no stock starts keeping it with this.
INSERT INTO stock (sku, on_hand, received) VALUES (@sku, @quantity::integer, @quantity::integer)
ON CONFLICT (sku) DO UPDATE SET on_hand = stock.on_hand + EXCLUDED.on_hand, received = stock.received + EXCLUDED.received
RETURNING on_hand, received;

-- name: StockReservationsOfKey :many
-- What one key's claim reserved, and what became of it.
SELECT sku, quantity, state FROM stock_reservations
WHERE scope = (@customer_id::uuid)::text AND key = @key::text ORDER BY sku;

-- name: StockLevels :many
-- Every product that keeps stock, for the operator (web stock): what is on
-- hand, held by keys still started, sold, and all that came in, which the
-- first three add up to.
SELECT s.sku, p.name, s.on_hand, s.received,
       coalesce(sum(r.quantity) FILTER (WHERE r.state = 'reserved'), 0)::integer AS reserved,
       coalesce(sum(r.quantity) FILTER (WHERE r.state = 'sold'), 0)::integer AS sold
FROM stock s JOIN products p ON p.sku = s.sku
LEFT JOIN stock_reservations r ON r.sku = s.sku
GROUP BY s.sku, p.name, s.on_hand, s.received
ORDER BY s.sku;
