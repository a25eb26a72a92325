-- name: ClaimKey :one
-- lock_remaining is measured by the database clock: negative or zero means
-- the lock has expired. The application server's clock never judges a lock.
-- The first step of every order, in one round trip. It inserts the key as
-- started and locked by this request, with the priced order the completer
-- needs and a new operation id, and records the "claimed" event; if the key
-- already exists it reports the row as this statement's snapshot sees it. A
-- row another transaction committed after that snapshot is invisible here,
-- so "no row at all" means "look again with LockKey".
WITH inserted AS (
    INSERT INTO idempotency_keys (customer_id, key, fingerprint, locked_until, lock_token, request, operation_id, provider_key)
    VALUES (@customer_id, @key, @fingerprint, now() + @lock_for::interval, @lock_token, @request, @operation_id, @provider_key::text)
    ON CONFLICT (customer_id, key) DO NOTHING
    RETURNING true AS inserted, customer_id, key, fingerprint, status, locked_until,
              (locked_until - now())::interval AS lock_remaining, response_code, response_body, operation_id,
              (now() - created_at)::interval AS age
),
claimed AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT customer_id, key, 'claimed', jsonb_build_object('locked_until', locked_until)
    FROM inserted
)
SELECT inserted, fingerprint, status, lock_remaining, response_code, response_body, operation_id, age
FROM inserted
UNION ALL
SELECT false, k.fingerprint, k.status, (k.locked_until - now())::interval, k.response_code, k.response_body,
       k.operation_id, (now() - k.created_at)::interval
FROM idempotency_keys k
WHERE k.customer_id = @customer_id AND k.key = @key
  AND NOT EXISTS (SELECT FROM inserted);

-- name: ClaimCartKey :one
-- ClaimKey for an order of a cart version. A new key is inserted only if
-- the cart is this customer's, still open, still at @cart_version, and its
-- version is not bound to another key; the same statement binds the version
-- to this key (the UPDATE locks the cart, so two keys racing for one version
-- cannot both get through, and a change of the lines waits for it). A key
-- already there is reported as ClaimKey does, whatever the cart holds now, so
-- a finished order is replayed after its cart closed. No row at all means
-- that the cart refused the key, or that the row is too new for this
-- statement's snapshot; the engine reads the cart to tell which.
WITH cart AS (
    UPDATE carts SET order_key = @key::text, order_key_at = now()
    WHERE carts.id = @cart_id AND carts.customer_id = @customer_id AND carts.version = @cart_version
      AND carts.order_id IS NULL AND (carts.order_key IS NULL OR carts.order_key = @key::text)
      AND NOT EXISTS (SELECT FROM idempotency_keys k WHERE k.customer_id = @customer_id AND k.key = @key::text)
    RETURNING carts.id, carts.version
),
inserted AS (
    INSERT INTO idempotency_keys (customer_id, key, fingerprint, locked_until, lock_token, request, operation_id,
                                  provider_key, cart_id, cart_version)
    SELECT @customer_id, @key::text, @fingerprint, now() + @lock_for::interval, @lock_token, @request, @operation_id,
           @provider_key::text, cart.id, cart.version
    FROM cart
    ON CONFLICT (customer_id, key) DO NOTHING
    RETURNING true AS inserted, customer_id, key, fingerprint, status, locked_until,
              (locked_until - now())::interval AS lock_remaining, response_code, response_body, operation_id,
              (now() - created_at)::interval AS age
),
claimed AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT customer_id, key, 'claimed', jsonb_build_object('locked_until', locked_until)
    FROM inserted
)
SELECT inserted, fingerprint, status, lock_remaining, response_code, response_body, operation_id, age
FROM inserted
UNION ALL
SELECT false, k.fingerprint, k.status, (k.locked_until - now())::interval, k.response_code, k.response_body,
       k.operation_id, (now() - k.created_at)::interval
FROM idempotency_keys k
WHERE k.customer_id = @customer_id AND k.key = @key::text
  AND NOT EXISTS (SELECT FROM inserted);

-- name: KeyExists :one
-- Whether a key has been claimed, for the engine's check of a form's amount:
-- a key in use is judged by what it was claimed for, a new one by the amount.
SELECT EXISTS (SELECT FROM idempotency_keys WHERE customer_id = @customer_id AND key = @key);

-- name: LockKey :one
-- Locks an existing key for the rest of the transaction so that deciding to
-- take it over and doing so cannot interleave with another request. A
-- takeover resumes the operation with the request the key was claimed for.
SELECT fingerprint, status, (locked_until - now())::interval AS lock_remaining,
       response_code, response_body, operation_id, request, (now() - created_at)::interval AS age
FROM idempotency_keys
WHERE customer_id = @customer_id AND key = @key
FOR UPDATE;

-- name: TakeOverKey :exec
-- Hands a started key whose lock expired to a new attempt, and records the
-- "taken_over" event. The new token is what makes any finish by the previous
-- holder match no row.
WITH taken AS (
    UPDATE idempotency_keys
    SET lock_token = @lock_token,
        locked_until = now() + @lock_for::interval
    WHERE idempotency_keys.customer_id = @customer_id AND idempotency_keys.key = @key
      AND status = 'started'
    RETURNING idempotency_keys.customer_id, idempotency_keys.key, idempotency_keys.locked_until
)
INSERT INTO key_events (customer_id, key, event, detail)
SELECT customer_id, key, 'taken_over', jsonb_build_object('by', 'request', 'locked_until', locked_until)
FROM taken;

-- name: TakeOverStuckKey :one
-- The completer's claim: one started key whose lock has expired and whose
-- client has had grace to retry, taken over exactly as a retry would (a new
-- lock token) and recorded as "taken_over". SKIP LOCKED passes over a key
-- that a retry or another completer is deciding about right now, so several
-- instances never wait for each other; the re-check of the WHERE clause on
-- the locked row (READ COMMITTED) drops a key taken over meanwhile. Parked
-- keys (see ParkKey) are left alone; settle_attempts counts the takeovers.
WITH stuck AS (
    SELECT s.customer_id, s.key
    FROM idempotency_keys s
    WHERE s.status = 'started' AND s.locked_until <= now() AND s.request IS NOT NULL
      AND s.created_at <= now() - @grace::interval AND s.parked_at IS NULL
    ORDER BY s.locked_until
    LIMIT 1
    FOR UPDATE SKIP LOCKED
),
taken AS (
    UPDATE idempotency_keys k
    SET lock_token = @lock_token,
        locked_until = now() + @lock_for::interval,
        settle_attempts = k.settle_attempts + 1
    FROM stuck
    WHERE k.customer_id = stuck.customer_id AND k.key = stuck.key AND k.status = 'started'
      AND k.parked_at IS NULL
    RETURNING k.customer_id, k.key, k.request, k.operation_id, k.locked_until, k.settle_attempts
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT customer_id, key, 'taken_over',
           jsonb_build_object('by', 'completer', 'locked_until', locked_until, 'attempt', settle_attempts)
    FROM taken
)
SELECT customer_id, key, request, operation_id, settle_attempts FROM taken;

-- name: ParkKey :one
-- Parks a poison key: the completer failed to settle it max-attempts times,
-- so it stops taking it over and leaves it, still started, for an operator.
-- Only the attempt holding the lock parks it; the event records why.
WITH parked AS (
    UPDATE idempotency_keys
    SET parked_at = now()
    WHERE idempotency_keys.customer_id = @customer_id AND idempotency_keys.key = @key
      AND status = 'started' AND lock_token = @lock_token
    RETURNING idempotency_keys.customer_id, idempotency_keys.key, idempotency_keys.settle_attempts,
              idempotency_keys.parked_at
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT customer_id, key, 'parked', jsonb_build_object('attempts', settle_attempts, 'error', @reason::text)
    FROM parked
)
SELECT parked_at FROM parked;

-- name: RenewLock :one
-- The heartbeat of an attempt waiting on the provider: it extends the lock
-- only while the key is still started and carries this attempt's token. No
-- row means a newer attempt took the key over, and this one must stop.
UPDATE idempotency_keys
SET locked_until = now() + @lock_for::interval
WHERE customer_id = @customer_id AND key = @key
  AND status = 'started' AND lock_token = @lock_token
RETURNING locked_until;

-- name: FinishKey :one
-- Stores a definite outcome that wrote no order (a declined card, a payment
-- the completer found was never made), but only for the attempt that still
-- holds the key, and records the event ("finished", or "recovered" when the
-- completer finishes it).
WITH finished AS (
    UPDATE idempotency_keys
    SET status = 'finished', response_code = @response_code::int, response_body = @response_body
    WHERE idempotency_keys.customer_id = @customer_id AND idempotency_keys.key = @key
      AND status = 'started' AND lock_token = @lock_token
    RETURNING idempotency_keys.customer_id, idempotency_keys.key, idempotency_keys.response_code,
              idempotency_keys.response_body, idempotency_keys.cart_id
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT customer_id, key, @event::text, @detail::jsonb || jsonb_build_object('status', response_code)
    FROM finished
),
-- Nothing was charged: the cart is released from this key, so that the
-- next checkout of the same cart mints a new key instead of replaying the
-- decline. A form still holding this key replays it. The version goes up
-- too: a key derived from (cart, version) by an order sent without one
-- names the declined operation, and must not be the next order's key.
released AS (
    UPDATE carts SET order_key = NULL, order_key_at = NULL, version = carts.version + 1
    FROM finished
    WHERE carts.id = finished.cart_id AND carts.order_key = finished.key
)
SELECT response_body FROM finished;

-- name: GetKey :one
-- A key as an operator (or a test) inspects it.
SELECT customer_id, key, status, locked_until, (locked_until - now())::interval AS lock_remaining,
       lock_token, response_code, created_at, operation_id, settle_attempts, parked_at
FROM idempotency_keys
WHERE customer_id = @customer_id AND key = @key;

-- name: ListKeyEvents :many
-- One key's audit trail, oldest first, across every life of the key.
SELECT event, at, detail
FROM key_events
WHERE customer_id = @customer_id AND key = @key
ORDER BY id
LIMIT @max_rows;
