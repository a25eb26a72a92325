-- name: EnsureShopper :exec
-- Browser shoppers are customers without a token. Their id is minted with
-- the session cookie and the row written the first time they need one;
-- writing it again is harmless, which also heals a cookie that outlived its
-- row (a wiped database behind a long-lived session).
INSERT INTO customers (id) VALUES (@id) ON CONFLICT (id) DO NOTHING;
