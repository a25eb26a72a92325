-- name: ReconcilerCursor :one
-- Where the reconciler's last pass stopped reading the provider's charges.
SELECT after FROM reconciler_cursor;

-- name: AdvanceReconcilerCursor :exec
-- Moves the cursor forward only: two reconcilers finishing in either order
-- leave it at the furthest point either settled. Charge ids are
-- time-ordered strings, so text order is list order.
UPDATE reconciler_cursor
SET after = @after::text, updated_at = now()
WHERE after < @after::text;

-- name: MatchCharge :one
-- What the shop knows of one provider charge: whether an order holds it,
-- and the key whose operation made it (by the provider key stored at the
-- claim), if that key still exists. key_status is '' when there is none;
-- key_parked says the completer gave the key up to an operator.
-- refund_recorded tells a refund the reconciler recorded from one it made
-- at the provider but did not record (it stopped between the two).
SELECT
    EXISTS (SELECT FROM orders o WHERE o.charge_id = @charge_id::text) AS has_order,
    EXISTS (SELECT FROM reconciled_refunds r WHERE r.charge_id = @charge_id::text) AS refund_recorded,
    coalesce(k.scope::uuid, '00000000-0000-0000-0000-000000000000'::uuid)::uuid AS customer_id,
    coalesce(k.key, '')::text AS key,
    coalesce(k.status, '')::text AS key_status,
    (k.parked_at IS NOT NULL)::boolean AS key_parked
FROM (SELECT 1) AS one
LEFT JOIN (order_keys o JOIN idem_keys k ON k.scope = o.scope AND k.key = o.key)
    ON o.provider_key = @provider_key::text;

-- name: RecordRefund :one
-- Records a refund the reconciler made, once per charge, with its audit
-- event in the same statement (when the key is known: the nil customer and
-- '' mean the key is gone). No row means another reconciler recorded it
-- first: the caller must not count it again.
WITH recorded AS (
    INSERT INTO reconciled_refunds (charge_id, refund_id, customer_id, key, amount, currency)
    VALUES (@charge_id, @refund_id, nullif(@customer_id::uuid, '00000000-0000-0000-0000-000000000000'),
            nullif(@key::text, ''), @amount, @currency)
    ON CONFLICT (charge_id) DO NOTHING
    RETURNING charge_id, refund_id, customer_id, key, amount, currency
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT customer_id, key, 'refunded',
           jsonb_build_object('charge_id', charge_id, 'refund_id', refund_id, 'amount', amount, 'currency', currency)
    FROM recorded
    WHERE customer_id IS NOT NULL
)
SELECT charge_id FROM recorded;

-- name: ChargeHasOrder :one
-- Whether the order of a key holds the charge: asked after a finish lost its
-- lock while holding a succeeded charge. status is '' when the key is gone.
SELECT
    coalesce((SELECT k.status FROM idem_keys k WHERE k.scope = (@customer_id::uuid)::text AND k.key = @key::text), '')::text AS key_status,
    EXISTS (SELECT FROM orders o WHERE o.customer_id = @customer_id AND o.charge_id = @charge_id::text) AS has_order;

-- name: SeeUnclaimedCharge :one
-- Notes a succeeded charge that no order holds and no key claims, and
-- says how long ago (by the database's clock) a pass first saw it so.
INSERT INTO reconciler_unclaimed_charges (charge_id) VALUES (@charge_id)
ON CONFLICT (charge_id) DO UPDATE SET charge_id = EXCLUDED.charge_id
RETURNING extract(epoch FROM now() - first_seen)::double precision AS seen_for_seconds;
