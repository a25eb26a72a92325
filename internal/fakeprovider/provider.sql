-- name: ProviderCreateCharge :one
-- The fake provider's own idempotency: one charge per idempotency key. A
-- second request with the key inserts nothing and reads the first charge.
INSERT INTO provider.charges (id, idempotency_key, params_hash, amount, currency, card_last4, description, status)
VALUES (@id, @idempotency_key, @params_hash, @amount, @currency, @card_last4, @description, @status)
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING id, idempotency_key, params_hash, amount, currency, card_last4, description, status, created_at;

-- name: ProviderChargeByKey :one
SELECT id, idempotency_key, params_hash, amount, currency, card_last4, description, status, created_at
FROM provider.charges
WHERE idempotency_key = @idempotency_key;

-- name: ProviderChargeByID :one
SELECT id, idempotency_key, params_hash, amount, currency, card_last4, description, status, created_at
FROM provider.charges
WHERE id = @id;

-- name: ProviderLockKey :exec
-- Serialises every create and cancel of one idempotency key until the end of
-- the transaction, so that a cancel and a late create of the same operation
-- cannot both see "nothing yet" and both go ahead. Transaction-scoped: a
-- crash releases it with the transaction. The first argument is this
-- provider's class of advisory locks (the two-int4 key space does not
-- overlap the one-bigint space the shop's own locks use).
SELECT pg_advisory_xact_lock(1886351984, hashtext(@idempotency_key::text));

-- name: ProviderKeyCanceled :one
SELECT EXISTS (SELECT FROM provider.canceled_keys WHERE idempotency_key = @idempotency_key);

-- name: ProviderCancelKey :exec
INSERT INTO provider.canceled_keys (idempotency_key)
VALUES (@idempotency_key)
ON CONFLICT (idempotency_key) DO NOTHING;

-- name: ProviderListCharges :many
-- A page of charges in id order, after the cursor (the last id of the
-- previous page; '' for the first), each with whether it has been refunded.
-- Ids are "ch_" and the hex digits of a version 7 UUID, whose first bits are
-- its creation time, so id order is creation order in any collation.
SELECT c.id, c.idempotency_key, c.amount, c.currency, c.card_last4, c.description, c.status, c.created_at,
       (r.id IS NOT NULL)::boolean AS refunded
FROM provider.charges c
LEFT JOIN provider.refunds r ON r.charge_id = c.id
WHERE c.id > @after::text
ORDER BY c.id
LIMIT @max_rows;

-- name: ProviderCreateRefund :one
-- One refund per idempotency key and one per charge: a retry with the same
-- key inserts nothing and the caller reads the refund made first.
INSERT INTO provider.refunds (id, idempotency_key, charge_id, amount)
VALUES (@id, @idempotency_key, @charge_id, @amount)
ON CONFLICT DO NOTHING
RETURNING id, idempotency_key, charge_id, amount, created_at;

-- name: ProviderRefundByCharge :one
SELECT id, idempotency_key, charge_id, amount, created_at
FROM provider.refunds
WHERE charge_id = @charge_id;
