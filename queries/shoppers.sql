-- name: EnsureShopper :exec
-- Browser shoppers are customers without a token. Their id is minted with
-- the session cookie and the row written the first time they need one;
-- writing it again is harmless, which also heals a cookie that outlived its
-- row (a wiped database behind a long-lived session).
INSERT INTO customers (id) VALUES (@id) ON CONFLICT (id) DO NOTHING;

-- name: ShopperSignedOut :one
-- Whether the shopper a session cookie names has signed out. A shopper with
-- no row (a cookie older than a wiped database) has not.
SELECT EXISTS (SELECT FROM customers WHERE id = @id AND signed_out_at IS NOT NULL) AS signed_out;

-- name: SignOutShopper :exec
-- Ends the shopper's sessions, in every browser that holds its cookie.
UPDATE customers SET signed_out_at = now() WHERE id = @id AND token_hash IS NULL AND signed_out_at IS NULL;
