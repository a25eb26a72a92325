-- name: FinishOrder :one
-- The last step of a successful order, in one statement and so in one
-- transaction: mark the key finished with the response to replay, write the
-- order and record the event ("finished", or "recovered" when the completer
-- finishes it), but only if this attempt still holds the key's lock token.
-- When a newer attempt has taken the key over, the UPDATE matches no row, the
-- INSERTs have nothing to select from, and the statement returns no row.
WITH finished AS (
    UPDATE idempotency_keys
    SET status = 'finished', response_code = @response_code::int, response_body = @response_body
    WHERE idempotency_keys.customer_id = @customer_id AND idempotency_keys.key = @key
      AND status = 'started' AND lock_token = @lock_token
    RETURNING idempotency_keys.customer_id, idempotency_keys.key, idempotency_keys.response_code,
              idempotency_keys.response_body, idempotency_keys.cart_id, idempotency_keys.cart_version
),
inserted AS (
    INSERT INTO orders (customer_id, id, idempotency_key, amount, currency, charge_id, items)
    SELECT customer_id, @order_id, key, @amount, @currency, @charge_id, @items
    FROM finished
    RETURNING id
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT finished.customer_id, finished.key, @event::text,
           @detail::jsonb || jsonb_build_object('status', finished.response_code, 'order_id', inserted.id)
    FROM finished, inserted
),
-- An order placed from a cart closes it, whoever finishes it (the request
-- or the completer): the shopper's next change opens a new, empty cart. Only
-- the version that was paid for: a cart changed in another tab while the
-- order ran stays open with its new lines, which nobody has paid for.
closed AS (
    UPDATE carts SET order_id = inserted.id
    FROM finished, inserted
    WHERE carts.id = finished.cart_id AND carts.version = finished.cart_version AND carts.order_id IS NULL
)
SELECT finished.response_body FROM finished, inserted;

-- name: GetOrder :one
SELECT *
FROM orders
WHERE customer_id = @customer_id AND id = @id;

-- name: ListOrders :many
SELECT *
FROM orders
WHERE customer_id = @customer_id
ORDER BY id DESC
LIMIT @max_rows;
