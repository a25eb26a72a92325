-- name: FinishOrder :one
-- The last step of a successful order, in one statement and so in one
-- transaction: the kit's fenced finish (idem_finish) stores the receipt as
-- the key's answer, and only if it did, the order is written, the event
-- recorded ("finished", or "recovered" when the completer finishes it) and
-- the cart version paid for closed. When a newer attempt has taken the key
-- over, idem_finish returns false, the INSERTs have nothing to select from,
-- and the statement returns no row.
--
-- The same statement is the outbox: the "order placed" event goes into
-- River's job table as one job per consumer (internal/outbox), FROM
-- inserted, so it exists exactly when the order does, for no extra round
-- trip. The columns are those River's own insert (JobInsertFastMany) fills;
-- TestEnqueuedJobsRun fails if they drift from what River's workers take.
-- @job_metadata carries the finish's trace ({"traceparent": …}, or {}), which
-- River's OpenTelemetry middleware reads to link each job's run to it.
--
-- The cart's row is locked before the key's, in the order ClaimOrderKey
-- takes them. A second claim of the same key, whose UPDATE of the cart
-- waited for the first claim and then re-checked only the cart's new row,
-- holds the cart's row and waits for the key's; a finish holding the key's
-- row and waiting for the cart's was a deadlock, which PostgreSQL ended by
-- failing one side (TestFinishLocksTheCartBeforeTheKey).
WITH cart_first AS MATERIALIZED (
    SELECT carts.id
    FROM order_keys o JOIN carts ON carts.id = o.cart_id AND carts.customer_id = @customer_id::uuid
    WHERE o.scope = (@customer_id::uuid)::text AND o.key = @key::text
    FOR UPDATE OF carts
),
finished AS MATERIALIZED (
    SELECT idem_finish((@customer_id::uuid)::text, @key::text, @lock_token::uuid, @response_status::integer,
                       NULL::jsonb, @response_body::bytea) AS ok
    FROM (SELECT count(*) FROM cart_first) AS cart_locked
),
inserted AS (
    INSERT INTO orders (customer_id, id, idempotency_key, amount, currency, charge_id, items)
    SELECT @customer_id::uuid, @order_id, @key::text, @amount, @currency, @charge_id, @items
    FROM finished WHERE ok
    RETURNING customer_id, id
),
enqueued AS (
    INSERT INTO river_job (kind, args, queue, priority, max_attempts, state, scheduled_at, tags, metadata)
    SELECT consumer.kind, jsonb_build_object('customer_id', inserted.customer_id, 'order_id', inserted.id),
           'default', 1, 25, 'available'::river_job_state, now(), '{order_placed}'::varchar(255)[], @job_metadata::jsonb
    FROM inserted CROSS JOIN unnest(@job_kinds::text[]) AS consumer(kind)
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT @customer_id::uuid, @key::text, @event::text,
           @detail::jsonb || jsonb_build_object('status', @response_status::integer, 'order_id', inserted.id)
    FROM inserted
),
-- An order placed from a cart closes it, whoever finishes it (the request
-- or the completer): the shopper's next change opens a new, empty cart. Only
-- the version that was paid for: a cart changed in another tab while the
-- order ran stays open with its new lines, which nobody has paid for.
closed AS (
    UPDATE carts SET order_id = inserted.id
    FROM inserted, order_keys o
    WHERE o.scope = (@customer_id::uuid)::text AND o.key = @key::text
      AND carts.id = o.cart_id AND carts.customer_id = @customer_id::uuid AND carts.version = o.cart_version
      AND carts.order_id IS NULL
),
-- What the claim reserved is sold with the order (migration 00180).
sold AS (
    UPDATE stock_reservations r SET state = 'sold', ended_at = now()
    FROM inserted
    WHERE r.scope = (@customer_id::uuid)::text AND r.key = @key::text AND r.state = 'reserved'
)
SELECT inserted.id FROM inserted;

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
