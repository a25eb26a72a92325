-- name: EnsureShopper :exec
-- Browser shoppers are customers without a token. Their id is minted with
-- the session cookie and the row written the first time they need one;
-- writing it again is harmless, which also heals a cookie that outlived its
-- row (a wiped database behind a long-lived session).
INSERT INTO customers (id) VALUES (@id) ON CONFLICT (id) DO NOTHING;

-- name: ShopperKey :one
-- A key as the browser checkout's status page needs it: scoped to the
-- shopper, so another shopper's key is simply not found.
SELECT status, (locked_until - now())::interval AS lock_remaining, response_code, response_body
FROM idempotency_keys
WHERE customer_id = @customer_id AND key = @key;
