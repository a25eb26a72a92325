-- name: ListCustomerKeys :many
-- A customer's keys as the double-click lab shows them, oldest first. The
-- lock's remaining time is measured by the database clock, like every
-- decision about a lock.
SELECT key, status, locked_until, (locked_until - now())::interval AS lock_remaining,
       lock_token, response_status, operation_id, created_at, (parked_at IS NOT NULL)::boolean AS parked
FROM idem_keys_v1
WHERE scope = (@customer_id::uuid)::text
ORDER BY created_at, key
LIMIT @max_rows;

-- name: CountCustomerOrders :one
SELECT count(*) FROM orders WHERE customer_id = @customer_id;

-- name: OrderLoyaltyJobs :many
-- The loyalty jobs of a customer's orders, as the worker-crash scenario
-- shows them: how many attempts each took, the first attempt's error, when
-- it failed and when the last attempt began (the redelivery), for the marks
-- on its time line (a job not yet failed or attempted reads its creation).
SELECT id, state::text AS state, attempt::integer AS attempt,
       coalesce(errors[1]->>'error', '')::text AS first_error,
       coalesce((errors[1]->>'at')::timestamptz, created_at)::timestamptz AS first_failed_at,
       coalesce(attempted_at, created_at)::timestamptz AS attempted_at
FROM river_job
WHERE kind = 'loyalty_points' AND args->>'customer_id' = (@customer_id::uuid)::text
ORDER BY id;

-- name: CustomerLedger :one
-- A customer's loyalty ledger: its rows and their sum.
SELECT count(*) AS rows, coalesce(sum(points), 0)::bigint AS points
FROM loyalty_ledger
WHERE customer_id = @customer_id;

-- name: CustomerStripeEvents :many
-- The Stripe events the shop's webhook inbox holds for a customer's
-- PaymentIntents, in the order they were handled, each with when the
-- order holding its intent was written (null: none is), as the
-- webhook-before-the-answer scenario shows them. Both times are the
-- database's.
SELECT e.event_id, e.type, e.payment_intent_id, e.effect, e.received_at, o.created_at AS order_written_at
FROM stripe_events e
LEFT JOIN orders o ON o.customer_id = e.customer_id AND o.charge_id = e.payment_intent_id
WHERE e.customer_id = @customer_id::uuid
ORDER BY e.received_at, e.event_id;

-- name: DemoStats :one
-- The totals the lab's fault panel and GET /api/demo/stats show; a full
-- count is fine at demo sizes. (The charges are the provider's.)
SELECT
    (SELECT count(*) FROM orders) AS orders,
    (SELECT count(*) FROM idem_keys_v1 k JOIN order_keys o USING (scope, key) WHERE k.status = 'started') AS keys_started,
    (SELECT count(*) FROM idem_keys_v1 k JOIN order_keys o USING (scope, key) WHERE k.status = 'finished') AS keys_finished,
    (SELECT count(*) FROM idem_keys_v1 k JOIN order_keys o USING (scope, key)
     WHERE k.status = 'started' AND k.parked_at IS NOT NULL) AS keys_parked,
    (SELECT count(*) FROM reconciled_refunds) AS refunds;

-- name: CartCustomer :one
-- The customer a cart belongs to: how the lab learns the id of the browser
-- shopper its 3-D Secure scenarios make, whose session cookie it cannot read.
SELECT customer_id FROM carts WHERE id = @id;

-- name: AgeAuthenticationWait :execrows
-- Moves back the start of a key's wait for its shopper's 3-D Secure by
-- seconds, by the database clock that judges it: the abandon-and-pay-again
-- scenario's shopper has then been away for AUTHENTICATION_WINDOW without
-- the lab waiting fifteen minutes. Only a key that waits is touched.
UPDATE order_keys
SET awaiting_authentication_at = awaiting_authentication_at - make_interval(secs => @seconds::double precision)
WHERE scope = (@customer_id::uuid)::text AND key = @key::text AND awaiting_authentication_at IS NOT NULL;

-- name: AddLabMug :one
-- The lab's own mug (the last-mug scenario's), added to the products with a
-- stock row holding none, in one statement: it is never for a moment a
-- product without a row, which the shop would sell without limit (migration
-- 00180). Whether it was added now: the shop's catalog, cached for a few
-- seconds, may not list it yet.
WITH product AS (
    INSERT INTO products (sku, name, price, currency, description)
    VALUES (@sku::text, @name::text, @price::bigint, @currency::text, @description::text)
    ON CONFLICT (sku) DO NOTHING
    RETURNING sku
),
kept AS (
    INSERT INTO stock (sku, on_hand, received) VALUES (@sku::text, 0, 0)
    ON CONFLICT (sku) DO NOTHING
)
SELECT count(*) > 0 AS added FROM product;

-- name: RestockLabMug :one
-- Receives what brings the lab's mug to exactly one on hand, as a delivery
-- (web stock receive's ReceiveStock) does: on hand and received go up
-- together, so on hand + reserved + sold = received still holds. With more
-- than one on hand (an operator received some) it changes nothing: the
-- lab takes no stock away, and the run says it cannot be told. Returns what
-- is on hand after.
UPDATE stock SET on_hand = greatest(on_hand, 1), received = received + greatest(1 - on_hand, 0)
WHERE sku = @sku::text
RETURNING on_hand;

-- name: LabMugOf :many
-- What the last-mug run's shoppers reserved of the lab's mug, and when, by
-- the database clock: the claim's reservation and what became of it.
SELECT (scope::uuid) AS customer_id, key, quantity, state, reserved_at, ended_at
FROM stock_reservations
WHERE sku = @sku::text AND scope IN (SELECT unnest(@customer_ids::uuid[])::text)
ORDER BY reserved_at, scope;

-- name: LabMugStock :one
-- The lab's mug's stock row and what its reservations add up to.
SELECT s.on_hand, s.received,
       coalesce(sum(r.quantity) FILTER (WHERE r.state = 'reserved'), 0)::integer AS reserved,
       coalesce(sum(r.quantity) FILTER (WHERE r.state = 'sold'), 0)::integer AS sold
FROM stock s LEFT JOIN stock_reservations r ON r.sku = s.sku
WHERE s.sku = @sku::text
GROUP BY s.sku, s.on_hand, s.received;
