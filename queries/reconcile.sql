-- name: ReconcilerCursor :one
-- Where the reconciler's last pass stopped reading the provider's
-- PaymentIntents: the creation time (Unix seconds) before which every
-- intent is settled.
SELECT created_from FROM reconciler_cursor;

-- name: AdvanceReconcilerCursor :exec
-- Moves the cursor forward only: two reconcilers finishing in either order
-- leave it at the furthest point either settled.
UPDATE reconciler_cursor
SET created_from = @created_from::bigint, updated_at = now()
WHERE created_from < @created_from::bigint;

-- name: MatchIntent :one
-- What the shop knows of one succeeded PaymentIntent: whether an order
-- holds it, and the key of the operation that made it, found by the
-- intent's metadata (customer, key, operation), if that key still exists
-- and still runs that operation. key_status is '' when it does not: the key
-- row was lost (a failover, a restore), or the key was reused after it
-- expired, for a new operation. key_parked says the completer gave the key
-- up to an operator. refund_recorded tells a refund the reconciler (or the
-- webhook handler) recorded from one made at the provider but not recorded.
-- The order is looked for under the metadata's customer, as the key is: an
-- intent of the shop always carries it, and one without it (an intent
-- created outside the shop) is held by no order.
SELECT
    EXISTS (SELECT FROM orders o WHERE o.customer_id::text = @customer_id::text AND o.charge_id = @intent_id::text) AS has_order,
    EXISTS (SELECT FROM reconciled_refunds r WHERE r.charge_id = @intent_id::text) AS refund_recorded,
    coalesce(k.status, '')::text AS key_status,
    (k.parked_at IS NOT NULL)::boolean AS key_parked
FROM (SELECT 1) AS one
LEFT JOIN idem_keys k
    ON k.kind = 'order' AND k.scope = @customer_id::text AND k.key = @key::text
   AND k.operation_id::text = @operation_id::text;

-- name: RecordRefund :one
-- Records a refund of a PaymentIntent (charge_id holds the intent) made by
-- the reconciler or the webhook handler, once per intent, with its audit
-- event on the key's trail in the same statement. The customer and key
-- come from the intent's metadata, so a lost operation's refund
-- (lost_operation: its key row was lost, or the key now runs another
-- operation) is explained on that key's trail too; a nil customer means an
-- intent without the shop's metadata. No row means another reconciler
-- recorded it first: the caller must not count it again.
WITH recorded AS (
    INSERT INTO reconciled_refunds (charge_id, refund_id, customer_id, key, amount, currency, lost_operation)
    VALUES (@charge_id, @refund_id, nullif(@customer_id::uuid, '00000000-0000-0000-0000-000000000000'),
            nullif(@key::text, ''), @amount, @currency, @lost_operation::boolean)
    ON CONFLICT (charge_id) DO NOTHING
    RETURNING charge_id, refund_id, customer_id, key, amount, currency, lost_operation
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT customer_id, key, 'refunded',
           jsonb_build_object('payment_intent_id', charge_id, 'refund_id', refund_id, 'amount', amount,
                              'currency', currency, 'lost_operation', lost_operation)
    FROM recorded
    WHERE customer_id IS NOT NULL AND key IS NOT NULL
)
SELECT charge_id FROM recorded;

-- name: ChargeHasOrder :one
-- Whether the order of a key holds the charge: asked after a finish lost its
-- lock while holding a succeeded charge. status is '' when the key is gone.
SELECT
    coalesce((SELECT k.status FROM idem_keys k WHERE k.scope = (@customer_id::uuid)::text AND k.key = @key::text), '')::text AS key_status,
    EXISTS (SELECT FROM orders o WHERE o.customer_id = @customer_id AND o.charge_id = @charge_id::text) AS has_order;

-- name: SeeUnclaimedCharge :one
-- Notes a succeeded PaymentIntent that no order holds and no key of its
-- operation claims, and
-- says how long ago (by the database's clock) a pass first saw it so.
INSERT INTO reconciler_unclaimed_charges (charge_id) VALUES (@charge_id)
ON CONFLICT (charge_id) DO UPDATE SET charge_id = EXCLUDED.charge_id
RETURNING extract(epoch FROM now() - first_seen)::double precision AS seen_for_seconds;

-- name: RecordStripeEvent :one
-- The webhook inbox: records an event with the effect it had, in the
-- transaction of that effect. No row means the event was handled before (a
-- redelivery): the caller rolls back and changes nothing.
INSERT INTO stripe_events (event_id, type, payment_intent_id, customer_id, key, effect, created)
VALUES (@event_id, @type, @payment_intent_id, nullif(@customer_id::uuid, '00000000-0000-0000-0000-000000000000'),
        nullif(@key::text, ''), @effect, @created)
ON CONFLICT (event_id) DO NOTHING
RETURNING event_id;

-- name: StripeEventSeen :one
-- Whether an event is in the inbox already.
SELECT EXISTS (SELECT FROM stripe_events WHERE event_id = @event_id);

-- name: IntentRefundEvents :one
-- Whether the inbox holds a charge.refunded event of an intent: a refund
-- (ours or an operator's) the provider told of before its
-- payment_intent.succeeded arrived.
SELECT EXISTS (SELECT FROM stripe_events WHERE payment_intent_id = @payment_intent_id AND type = 'charge.refunded');
