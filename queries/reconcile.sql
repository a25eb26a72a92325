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
-- What the shop knows of one succeeded PaymentIntent, found by the
-- intent's id alone, never by its metadata (which anyone who can create an
-- intent on the account, or forge an event, writes): whether an order
-- holds it (orders.charge_id), and the key whose operation made it (the
-- key row stores the id, StoreIntent, before the intent is confirmed).
-- key_status is '' when no key row stores it: the row was lost (a
-- failover, a restore), or the key was reused after it expired for a new
-- operation, or the intent is not this database's. key_parked says the
-- completer gave the key up to an operator. refund_recorded tells a refund
-- the reconciler (or the webhook handler) recorded from one made at the
-- provider but not recorded; refund_refused one the provider refused for
-- good, parked for an operator. ours says the metadata carries this
-- deployment's marker and names a customer of this database: only such an
-- intent, when no key row stores it, is taken for a lost operation's.
-- key_awaiting says its key waits for the shopper's bank (3-D Secure).
SELECT
    EXISTS (SELECT FROM orders o WHERE o.charge_id = @intent_id::text) AS has_order,
    EXISTS (SELECT FROM reconciled_refunds r WHERE r.charge_id = @intent_id::text) AS refund_recorded,
    EXISTS (SELECT FROM refused_refunds f WHERE f.payment_intent_id = @intent_id::text) AS refund_refused,
    coalesce(k.status, '')::text AS key_status,
    (k.parked_at IS NOT NULL)::boolean AS key_parked,
    (ok.awaiting_authentication_at IS NOT NULL)::boolean AS key_awaiting,
    (EXISTS (SELECT FROM deployment d WHERE d.deployment_id::text = @deployment_id::text)
     AND EXISTS (SELECT FROM customers c WHERE c.id = @customer_id::uuid))::boolean AS ours
FROM (SELECT 1) AS one
LEFT JOIN order_keys ok ON ok.payment_intent_id = @intent_id::text
LEFT JOIN idem_keys_v1 k ON k.kind = 'order' AND k.scope = ok.scope AND k.key = ok.key;

-- name: DeploymentID :one
-- This deployment's marker, made once by the migration: every instance on
-- this database writes it on the PaymentIntents it creates.
SELECT deployment_id::text FROM deployment;

-- name: RecordForeignIntent :one
-- Records a succeeded PaymentIntent this database did not make, once. No
-- row means it was recorded before (by the other source, or an earlier
-- pass): the caller does not count it again.
INSERT INTO foreign_intents (payment_intent_id, source, amount, currency, deployment_id, customer_id, created)
VALUES (@payment_intent_id, @source, @amount, @currency, @deployment_id, @customer_id, @created)
ON CONFLICT (payment_intent_id) DO NOTHING
RETURNING payment_intent_id;

-- name: ForeignIntents :many
-- The latest foreign intents, for the operator's page.
SELECT payment_intent_id, source, amount, currency, deployment_id, customer_id, created, first_seen
FROM foreign_intents ORDER BY first_seen DESC, payment_intent_id LIMIT @max_rows;

-- name: WatchIntent :exec
-- Puts an intent of this deployment that can still succeed (or succeeded
-- while its key was started) on the reconciler's watch list.
INSERT INTO reconciler_watched_intents (payment_intent_id) VALUES (@payment_intent_id)
ON CONFLICT (payment_intent_id) DO NOTHING;

-- name: WatchedIntents :many
-- The watched intents a pass reads again, the least recently read first,
-- at most max_rows of them, with how long ago each was first watched.
SELECT payment_intent_id, extract(epoch FROM now() - first_seen)::double precision AS watched_for_seconds
FROM reconciler_watched_intents ORDER BY checked_at, payment_intent_id LIMIT @max_rows;

-- name: CheckedWatchedIntent :exec
-- Notes that a pass read a watched intent and keeps watching it.
UPDATE reconciler_watched_intents SET checked_at = now() WHERE payment_intent_id = @payment_intent_id;

-- name: UnwatchIntent :exec
-- Takes a settled intent off the watch list.
DELETE FROM reconciler_watched_intents WHERE payment_intent_id = @payment_intent_id;

-- name: RecordRefusedRefund :one
-- Parks an intent whose refund the provider refused for good, once, for an
-- operator. No row means it was parked before.
INSERT INTO refused_refunds (payment_intent_id, amount, currency, customer_id, key, reason)
VALUES (@payment_intent_id, @amount, @currency, nullif(@customer_id::uuid, '00000000-0000-0000-0000-000000000000'),
        nullif(@key::text, ''), @reason)
ON CONFLICT (payment_intent_id) DO NOTHING
RETURNING payment_intent_id;

-- name: RefusedRefunds :many
-- The latest parked refunds, for the operator's page.
SELECT payment_intent_id, amount, currency, coalesce(customer_id::text, '')::text AS customer_id,
       coalesce(key, '')::text AS key, reason, at
FROM refused_refunds ORDER BY at DESC, payment_intent_id LIMIT @max_rows;

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
    coalesce((SELECT k.status FROM idem_keys_v1 k WHERE k.scope = (@customer_id::uuid)::text AND k.key = @key::text), '')::text AS key_status,
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

-- name: RecordPendingStripeEvent :one
-- RecordStripeEvent for an event whose key is still started, with the
-- intent put on the reconciler's watch list in the same statement, and so
-- the same commit. A redelivery records nothing and may watch an intent
-- watched before, or settled since: the reconciler unwatches it on its
-- next pass.
WITH watched AS (
    INSERT INTO reconciler_watched_intents (payment_intent_id) VALUES (@payment_intent_id)
    ON CONFLICT (payment_intent_id) DO NOTHING
)
INSERT INTO stripe_events (event_id, type, payment_intent_id, customer_id, key, effect, created)
VALUES (@event_id, @type, @payment_intent_id, nullif(@customer_id::uuid, '00000000-0000-0000-0000-000000000000'),
        nullif(@key::text, ''), @effect, @created)
ON CONFLICT (event_id) DO NOTHING
RETURNING event_id;

-- name: IntentRefundEvents :one
-- Whether the inbox holds a charge.refunded event of an intent: a refund
-- (ours or an operator's) the provider told of before its
-- payment_intent.succeeded arrived.
SELECT EXISTS (SELECT FROM stripe_events WHERE payment_intent_id = @payment_intent_id AND type = 'charge.refunded');
