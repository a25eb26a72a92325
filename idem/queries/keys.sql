-- name: Claim :one
-- A new key in one round trip. No row back means the key exists already.
INSERT INTO idem_keys (scope, key, fingerprint, operation_id, lock_token, locked_until, request)
VALUES (@scope, @key, @fingerprint, gen_random_uuid(), gen_random_uuid(), now() + @lease::interval, @request)
ON CONFLICT (scope, key) DO NOTHING
RETURNING operation_id, lock_token, locked_until;

-- name: LockKey :one
-- An existing key, locked for the rest of the transaction, with the
-- database's verdict on whether its holder's lease still runs.
SELECT fingerprint, status, operation_id, request, response_status, response_headers, response_body,
       (locked_until > now())::boolean AS held
FROM idem_keys
WHERE scope = @scope AND key = @key
FOR UPDATE;

-- name: TakeOver :one
-- Hands a started key whose lease has run out to a new attempt. The caller
-- holds the row lock (LockKey) and has checked that the lease ran out.
UPDATE idem_keys
SET lock_token = gen_random_uuid(), locked_until = now() + @lease::interval
WHERE scope = @scope AND key = @key AND status = 'started'
RETURNING operation_id, lock_token, locked_until, request;

-- name: TakeStuck :one
-- The completer's takeover: the oldest started key whose lease has run out,
-- skipping rows another completer is taking at this moment.
UPDATE idem_keys AS k
SET lock_token = gen_random_uuid(), locked_until = now() + @lease::interval
FROM (
    SELECT s.scope, s.key FROM idem_keys AS s
    WHERE s.status = 'started' AND s.locked_until < now()
    ORDER BY s.locked_until
    LIMIT 1
    FOR UPDATE SKIP LOCKED
) AS stuck
WHERE k.scope = stuck.scope AND k.key = stuck.key
RETURNING k.scope, k.key, k.operation_id, k.lock_token, k.locked_until, k.request;

-- name: Heartbeat :one
-- Extends the lease of the attempt holding lock_token; no row back means
-- the attempt has lost the key.
UPDATE idem_keys
SET locked_until = now() + @lease::interval
WHERE scope = @scope AND key = @key AND lock_token = @lock_token AND status = 'started'
RETURNING locked_until;

-- name: Finish :execrows
-- The fenced finish: only the attempt holding the current token, and only
-- once. Zero rows means the attempt lost the key.
UPDATE idem_keys
SET status = 'finished', response_status = @response_status, response_headers = @response_headers,
    response_body = @response_body, finished_at = now(), locked_until = now()
WHERE scope = @scope AND key = @key AND lock_token = @lock_token AND status = 'started';

-- name: Release :execrows
-- Gives a started key up when nothing was done under it, so that the next
-- request with the key starts afresh.
DELETE FROM idem_keys
WHERE scope = @scope AND key = @key AND lock_token = @lock_token AND status = 'started';

-- name: GetKey :one
SELECT status, response_status, response_headers, response_body,
       (locked_until > now())::boolean AS held
FROM idem_keys
WHERE scope = @scope AND key = @key;

-- name: Sweep :execrows
-- Deletes up to @batch answers finished more than @keep ago.
DELETE FROM idem_keys
WHERE (scope, key) IN (
    SELECT scope, key FROM idem_keys
    WHERE status = 'finished' AND finished_at < now() - @keep::interval
    LIMIT @batch
);
