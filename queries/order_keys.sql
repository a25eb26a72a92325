-- name: ClaimOrderKey :one
-- The first step of every order, in one round trip: the kit's claim of a new
-- key (idem_claim, with the priced order the completer needs), the key sent
-- to the provider and the "claimed" event. For an order of a cart version
-- (@cart_id set), the key is claimed only if the cart is this customer's,
-- still open, still at @cart_version and not bound to another key, and the
-- same statement binds the version to the key (the UPDATE locks the cart:
-- two keys racing for one version cannot both get through, and a change of
-- the lines waits for it).
--
-- It names nothing of the kit but its SQL contract (idem/README.md). A
-- key already there is read through the contract's view and reported as
-- the kit's claim reports it (idem.KeyRow), whatever the cart holds now (a
-- finished order is replayed after its cart closed), and judged by the kit,
-- which runs this statement (idem.Store.ClaimWith).
-- No row at all means that the cart refused the key, or that the key is too
-- new for this statement's snapshot; the engine reads the cart to tell which.
WITH cart AS (
    UPDATE carts SET order_key = @key::text, order_key_at = now()
    WHERE carts.id = sqlc.narg('cart_id')::uuid AND carts.customer_id = @customer_id::uuid
      AND carts.version = sqlc.narg('cart_version')::bigint
      AND carts.order_id IS NULL AND (carts.order_key IS NULL OR carts.order_key = @key::text)
      AND NOT EXISTS (SELECT FROM idem_keys_v1 k WHERE k.scope = (@customer_id::uuid)::text AND k.key = @key::text)
    RETURNING carts.id, carts.version
),
claimed AS MATERIALIZED (
    SELECT idem_claim((@customer_id::uuid)::text, @key::text, @fingerprint::bytea, @lease::interval,
                      @request::jsonb, @operation_id::uuid, @lock_token::uuid, @kind::text) AS inserted,
           cart.id AS cart_id, cart.version AS cart_version
    FROM (SELECT 1) AS one
    LEFT JOIN cart ON true
    WHERE sqlc.narg('cart_id')::uuid IS NULL OR cart.id IS NOT NULL
),
-- Stock (migration 00180): a new key takes its lines' quantities off the
-- products that keep stock, here, locking their rows in the order of their
-- SKUs (two claims of two products each cannot deadlock). Where a product
-- has too few left, the CHECK stock_sold_out fails this statement as a
-- whole: nothing is claimed, reserved or charged, and the shop answers
-- "sold out" (database.ErrSoldOut). A key that existed takes nothing: its
-- first claim took it.
wanted AS (
    SELECT line ->> 'sku' AS sku, sum((line ->> 'quantity')::integer)::integer AS quantity
    FROM claimed, jsonb_array_elements(@request::jsonb -> 'lines') AS line
    WHERE claimed.inserted
    GROUP BY line ->> 'sku'
),
locked AS (
    SELECT stock.sku FROM stock JOIN wanted ON wanted.sku = stock.sku
    ORDER BY stock.sku FOR UPDATE OF stock
),
reserved AS (
    UPDATE stock SET on_hand = stock.on_hand - wanted.quantity
    FROM locked, wanted WHERE stock.sku = locked.sku AND wanted.sku = locked.sku
    RETURNING stock.sku, wanted.quantity
),
held AS (
    INSERT INTO stock_reservations (scope, key, sku, quantity)
    SELECT (@customer_id::uuid)::text, @key::text, reserved.sku, reserved.quantity FROM reserved
),
about AS (
    INSERT INTO order_keys (scope, key, provider_key, cart_id, cart_version)
    SELECT (@customer_id::uuid)::text, @key::text, @provider_key::text, cart_id, cart_version
    FROM claimed WHERE inserted
),
-- The event names the claim's trace (its W3C traceparent, when tracing is
-- on), so that the completer's pass over the key, a trace of its own, can
-- link back to it.
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT @customer_id::uuid, @key::text, 'claimed',
           jsonb_strip_nulls(jsonb_build_object('locked_until', now() + @lease::interval,
                                                'traceparent', sqlc.narg('traceparent')::text))
    FROM claimed WHERE inserted
)
SELECT true AS inserted, @fingerprint::bytea AS fingerprint, 'started'::text AS status,
       NULL::integer AS response_status, NULL::bytea AS response_body,
       0::double precision AS lease_left_seconds, 0::double precision AS age_seconds
FROM claimed WHERE inserted
UNION ALL
SELECT false, k.fingerprint, k.status, k.response_status, k.response_body,
       extract(epoch FROM k.lease_left)::double precision,
       extract(epoch FROM k.age)::double precision
FROM idem_keys_v1 AS k
WHERE k.scope = (@customer_id::uuid)::text AND k.key = @key::text
  AND NOT EXISTS (SELECT FROM claimed WHERE inserted);

-- name: RecordKeyEvent :exec
-- Appends to a key's audit trail an event written beside its change: the
-- sweeper's expiry (in the delete's transaction) and a parking, with the
-- error only the completer knows. Claims and finishes are written by their
-- own statements, takeovers by RecordTakeover.
INSERT INTO key_events (customer_id, key, event, detail)
VALUES (@customer_id, @key, @event, @detail);

-- name: RecordTakeover :exec
-- Appends a takeover of an order key to its audit trail, in the takeover's
-- own transaction (the kit's TookOver hook, checkout.recordTakeover), so
-- that it commits with the takeover or not at all: who took the key, a
-- retry ("request") or the completer with its count of takeovers
-- ("attempt"), and when the new lease runs out.
INSERT INTO key_events (customer_id, key, event, detail)
VALUES ((@scope::text)::uuid, @key::text, 'taken_over',
        CASE WHEN @by_completer::boolean
             THEN jsonb_build_object('by', 'completer', 'attempt', @attempt::integer,
                                     'locked_until', @locked_until::timestamptz)
             ELSE jsonb_build_object('by', 'request', 'locked_until', @locked_until::timestamptz)
        END);

-- name: FinishKey :one
-- Stores a definite outcome that wrote no order (a declined card, a payment
-- the completer found was never made) with the kit's fenced finish
-- (idem_finish), and records the event ("finished", or "recovered" when the
-- completer finishes it). No row means the attempt lost the key. The
-- cart's row is locked before the key's, as FinishOrder locks them.
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
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT @customer_id::uuid, @key::text, @event::text, @detail::jsonb || jsonb_build_object('status', @response_status::integer)
    FROM finished WHERE ok
),
-- Nothing was charged: the cart is released from this key, so that the
-- next checkout of the same cart mints a new key instead of replaying the
-- decline. A form still holding this key replays it. The version goes up
-- too: a key derived from (cart, version) by an order sent without one
-- names the declined operation, and must not be the next order's key.
released AS (
    UPDATE carts SET order_key = NULL, order_key_at = NULL, version = carts.version + 1
    FROM finished, order_keys o
    WHERE finished.ok AND o.scope = (@customer_id::uuid)::text AND o.key = @key::text
      AND carts.id = o.cart_id AND carts.customer_id = @customer_id::uuid AND carts.order_key = @key::text
),
-- Nothing was sold: what the claim reserved goes back on hand, once (the
-- reservation leaves "reserved" here, and only a fenced finish gets here).
-- Rows locked in the order of their SKUs, as the claim locks them.
released_stock AS (
    UPDATE stock_reservations r SET state = 'released', ended_at = now()
    FROM finished
    WHERE finished.ok AND r.scope = (@customer_id::uuid)::text AND r.key = @key::text AND r.state = 'reserved'
    RETURNING r.sku, r.quantity
),
restock_locked AS (
    SELECT stock.sku FROM stock JOIN released_stock ON released_stock.sku = stock.sku
    ORDER BY stock.sku FOR UPDATE OF stock
),
restocked AS (
    UPDATE stock SET on_hand = stock.on_hand + released_stock.quantity
    FROM restock_locked, released_stock
    WHERE stock.sku = restock_locked.sku AND released_stock.sku = restock_locked.sku
)
SELECT ok FROM finished WHERE ok;

-- name: GetKey :one
-- A key as an operator (or a test) inspects it.
SELECT k.scope, k.key, k.status, k.locked_until, k.lease_left::interval AS lock_remaining,
       k.lock_token, k.response_status, k.created_at, k.operation_id, k.settle_attempts, k.parked_at
FROM idem_keys_v1 k
WHERE k.scope = (@customer_id::uuid)::text AND k.key = @key;

-- name: ListKeyEvents :many
-- One key's audit trail, oldest first, across every life of the key.
SELECT event, at, detail
FROM key_events
WHERE customer_id = @customer_id AND key = @key
ORDER BY id
LIMIT @max_rows;

-- name: StoreIntent :one
-- Stores the PaymentIntent of a key's operation, only while the key is
-- started, carries the attempt's lock token (the finish's fence) and its
-- lease has not run out by the database's clock: an attempt that was taken
-- over stores nothing, and so never confirms the intent it created; nor
-- does one that stalled past its lease with the create's answer in hand,
-- whose confirm would run where a retry may take the key over (the model's
-- lease_covers_calls found it). Storing the same id again is a no-op that
-- succeeds. No row means the attempt lost the key, or may lose it.
UPDATE order_keys o SET payment_intent_id = @payment_intent_id::text
FROM idem_keys_v1 k
WHERE o.scope = (@customer_id::uuid)::text AND o.key = @key::text
  AND k.scope = o.scope AND k.key = o.key AND k.status = 'started' AND k.lock_token = @lock_token::uuid
  AND k.lease_left > '0'::interval
  AND (o.payment_intent_id IS NULL OR o.payment_intent_id = @payment_intent_id::text)
RETURNING true AS stored;

-- name: AwaitAuthentication :one
-- Records that a key's operation waits for the shopper to authenticate the
-- payment with their bank, and where: only while the key is started and
-- carries the attempt's lock token (a taken-over attempt records nothing).
-- The wait's start is kept from the first time, so that the window the
-- completer allows is counted from the first redirect, whatever retries
-- send the shopper there again.
UPDATE order_keys o SET authenticate_url = @authenticate_url::text,
       awaiting_authentication_at = coalesce(o.awaiting_authentication_at, now())
FROM idem_keys_v1 k
WHERE o.scope = (@customer_id::uuid)::text AND o.key = @key::text
  AND k.scope = o.scope AND k.key = o.key AND k.status = 'started' AND k.lock_token = @lock_token::uuid
RETURNING true AS stored;

-- name: AwaitingKeyOfIntent :one
-- The key whose operation waits for its shopper to authenticate the
-- PaymentIntent with their bank (3-D Secure), found by the intent's id,
-- never by an event's metadata; no row when no started key waits for it.
SELECT (o.scope)::uuid AS customer_id, o.key
FROM order_keys o JOIN idem_keys_v1 k ON k.scope = o.scope AND k.key = o.key
WHERE o.payment_intent_id = @payment_intent_id::text AND o.awaiting_authentication_at IS NOT NULL
  AND k.status = 'started';

-- name: ClaimTrace :one
-- The trace of the latest claim of a key ('' when it was not traced, or the
-- key has no claim on record), for the reconciler's refund, a trace of its
-- own, to link to: the claim's event names it (ClaimOrderKey).
SELECT coalesce((SELECT e.detail->>'traceparent' FROM key_events e
                 WHERE e.customer_id = @customer_id::uuid AND e.key = @key::text AND e.event = 'claimed'
                 ORDER BY e.id DESC LIMIT 1), '')::text AS traceparent;

-- name: KeyIntent :one
-- The PaymentIntent stored for a key ('' when none), and the key's age by
-- the database's clock: what a takeover and the completer settle the key by;
-- where its shopper authenticates the payment and for how long the key has
-- waited for that (-1 when it does not);
-- and the trace of the key's claim ('' when it was not traced), which the
-- completer's trace links to.
SELECT coalesce(o.payment_intent_id, '')::text AS payment_intent_id,
       extract(epoch FROM k.age)::double precision AS age_seconds,
       coalesce(o.authenticate_url, '')::text AS authenticate_url,
       coalesce(extract(epoch FROM now() - o.awaiting_authentication_at), -1)::double precision AS awaiting_seconds,
       coalesce((SELECT e.detail->>'traceparent' FROM key_events e
                 WHERE e.customer_id = @customer_id::uuid AND e.key = @key::text AND e.event = 'claimed'
                 ORDER BY e.id DESC LIMIT 1), '')::text AS claim_traceparent
FROM order_keys o JOIN idem_keys_v1 k ON k.scope = o.scope AND k.key = o.key
WHERE o.scope = (@customer_id::uuid)::text AND o.key = @key::text;
