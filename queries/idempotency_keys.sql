-- name: ClaimKey :one
-- lock_remaining is measured by the database clock: negative or zero means
-- the lock has expired. The application server's clock never judges a lock.
-- The first step of every order, in one round trip. It inserts the key as
-- started and locked by this request; if the key already exists it reports
-- the row as this statement's snapshot sees it. A row another transaction
-- committed after that snapshot is invisible here, so "no row at all" means
-- "look again with LockKey".
WITH inserted AS (
    INSERT INTO idempotency_keys (customer_id, key, fingerprint, locked_until, lock_token)
    VALUES (@customer_id, @key, @fingerprint, now() + @lock_for::interval, @lock_token)
    ON CONFLICT (customer_id, key) DO NOTHING
    RETURNING true AS inserted, fingerprint, status,
              (locked_until - now())::interval AS lock_remaining, response_code, response_body
)
SELECT inserted, fingerprint, status, lock_remaining, response_code, response_body
FROM inserted
UNION ALL
SELECT false, k.fingerprint, k.status, (k.locked_until - now())::interval, k.response_code, k.response_body
FROM idempotency_keys k
WHERE k.customer_id = @customer_id AND k.key = @key
  AND NOT EXISTS (SELECT FROM inserted);

-- name: LockKey :one
-- Locks an existing key for the rest of the transaction so that deciding to
-- take it over and doing so cannot interleave with another request.
SELECT fingerprint, status, (locked_until - now())::interval AS lock_remaining,
       response_code, response_body
FROM idempotency_keys
WHERE customer_id = @customer_id AND key = @key
FOR UPDATE;

-- name: TakeOverKey :exec
-- Hands a started key whose lock expired to a new attempt. The new token is
-- what makes any finish by the previous holder match no row.
UPDATE idempotency_keys
SET lock_token = @lock_token,
    locked_until = now() + @lock_for::interval
WHERE customer_id = @customer_id AND key = @key AND status = 'started';

-- name: FinishKey :one
-- Stores a definite outcome that wrote no order (a declined card), but only
-- for the attempt that still holds the key.
UPDATE idempotency_keys
SET status = 'finished', response_code = @response_code::int, response_body = @response_body
WHERE customer_id = @customer_id AND key = @key
  AND status = 'started' AND lock_token = @lock_token
RETURNING response_body;

-- name: GetKey :one
-- A key as an operator (or a test) inspects it.
SELECT customer_id, key, status, locked_until, (locked_until - now())::interval AS lock_remaining,
       lock_token, response_code, created_at
FROM idempotency_keys
WHERE customer_id = @customer_id AND key = @key;
