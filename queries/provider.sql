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
