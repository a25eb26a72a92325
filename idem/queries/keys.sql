-- name: Claim :one
-- A new key in one round trip (idem_claim), or, when it exists, the key as
-- this statement's snapshot sees it, so that a replay, a mismatch and a
-- key in progress are also answered in one round trip. The lease left is
-- measured by the database clock (zero or less: run out). No row back means the key was inserted by another
-- transaction after this statement's snapshot: look again under a lock.
WITH claimed AS MATERIALIZED (
    SELECT idem_claim(@scope::text, @key::text, @fingerprint::bytea, @lease::interval, @request::jsonb,
                      @operation_id::uuid, @lock_token::uuid, @kind::text) AS inserted
)
SELECT true AS inserted, @fingerprint::bytea AS fingerprint, 'started'::text AS status,
       @operation_id::uuid AS operation_id, @request::jsonb AS request,
       NULL::integer AS response_status, NULL::jsonb AS response_headers, NULL::bytea AS response_body,
       0::double precision AS lease_left_seconds, 0::double precision AS age_seconds
FROM claimed WHERE claimed.inserted
UNION ALL
SELECT false, k.fingerprint, k.status, k.operation_id, k.request,
       k.response_status, k.response_headers, k.response_body,
       extract(epoch FROM k.locked_until - now())::double precision,
       extract(epoch FROM now() - k.created_at)::double precision
FROM claimed, idem_keys AS k
WHERE NOT claimed.inserted AND k.scope = @scope::text AND k.key = @key::text;

-- name: LockKey :one
-- An existing key, locked for the rest of the transaction, with the
-- database's verdict on whether its holder's lease still runs, and whether
-- the completer parked it (then no claim may take it over).
SELECT fingerprint, status, operation_id, request, response_status, response_headers, response_body,
       extract(epoch FROM locked_until - now())::double precision AS lease_left_seconds,
       extract(epoch FROM now() - created_at)::double precision AS age_seconds,
       (parked_at IS NOT NULL)::boolean AS parked
FROM idem_keys
WHERE scope = @scope AND key = @key
FOR UPDATE;

-- name: TakeOver :one
-- Hands a started key whose lease has run out to a new attempt. The caller
-- holds the row lock (LockKey) and has checked that the lease ran out and
-- that the key is not parked; the statement checks the latter again, so
-- that a parked key is never taken over, whatever its caller checked.
UPDATE idem_keys
SET lock_token = @lock_token::uuid, locked_until = now() + @lease::interval, asked_at = now()
WHERE scope = @scope AND key = @key AND status = 'started' AND parked_at IS NULL
RETURNING operation_id, request, locked_until;

-- name: TakeStuck :one
-- The completer's takeover: the oldest started key whose lease has run out
-- and whose client has had @grace to retry since it last asked (its claim,
-- or its last ask: see Asked), or that is older than @asks_for (past which
-- asks no longer hold the completer off), skipping parked keys and rows
-- another completer or a retry is deciding about at this moment (the
-- re-check of the WHERE clause on the locked row drops a key taken over
-- meanwhile). settle_attempts counts the takeovers. The pick is a CTE, run
-- once: as a subquery in FROM, a plan may run it again for each row it
-- joins, and take a second key.
WITH stuck AS MATERIALIZED (
    SELECT s.scope, s.key FROM idem_keys AS s
    WHERE s.kind = @kind::text AND s.status = 'started' AND s.parked_at IS NULL AND s.locked_until <= now()
      AND (coalesce(s.asked_at, s.created_at) <= now() - @grace::interval
           OR s.created_at <= now() - @asks_for::interval)
    ORDER BY s.locked_until
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
UPDATE idem_keys AS k
SET lock_token = @lock_token::uuid, locked_until = now() + @lease::interval,
    settle_attempts = k.settle_attempts + 1
FROM stuck
WHERE k.scope = stuck.scope AND k.key = stuck.key AND k.status = 'started' AND k.parked_at IS NULL
RETURNING k.scope, k.key, k.operation_id, k.request, k.settle_attempts, k.locked_until;

-- name: TakeStuckKey :one
-- The completer's takeover of one named key, for a caller that has learned
-- its outcome may be known now (the provider's webhook, a client back from
-- a redirect): a started key that is not parked and whose lease has run
-- out, however lately its client asked (no grace); a row another completer
-- or a retry is deciding about at this moment is skipped. settle_attempts
-- counts the takeovers, as TakeStuck's do.
WITH stuck AS MATERIALIZED (
    SELECT s.scope, s.key FROM idem_keys AS s
    WHERE s.scope = @scope AND s.key = @key AND s.kind = @kind::text AND s.status = 'started'
      AND s.parked_at IS NULL AND s.locked_until <= now()
    FOR UPDATE SKIP LOCKED
)
UPDATE idem_keys AS k
SET lock_token = @lock_token::uuid, locked_until = now() + @lease::interval,
    settle_attempts = k.settle_attempts + 1
FROM stuck
WHERE k.scope = stuck.scope AND k.key = stuck.key
RETURNING k.scope, k.key, k.operation_id, k.request, k.settle_attempts, k.locked_until;

-- name: Park :execrows
-- Parks a poison key held by the completer: it stays started, and no
-- completer takes it over again.
UPDATE idem_keys
SET parked_at = now()
WHERE scope = @scope AND key = @key AND lock_token = @lock_token::uuid AND status = 'started';

-- name: Unpark :execrows
-- An operator's hand back to the completer: a parked key whose cause they
-- have dealt with loses its parking and its attempts, and its lease ends,
-- so that the completer's next pass settles it afresh.
UPDATE idem_keys
SET parked_at = NULL, settle_attempts = 0, locked_until = least(locked_until, now())
WHERE scope = @scope AND key = @key AND status = 'started' AND parked_at IS NOT NULL;

-- name: Heartbeat :one
-- Extends the lease of the attempt holding lock_token; no row back means
-- the attempt has lost the key.
UPDATE idem_keys
SET locked_until = now() + @lease::interval
WHERE scope = @scope AND key = @key AND lock_token = @lock_token::uuid AND status = 'started'
RETURNING locked_until;

-- name: Expire :execrows
-- Ends the lease of the attempt holding lock_token now, by the database
-- clock, leaving the key started: the next claim takes it over at once.
UPDATE idem_keys
SET locked_until = now()
WHERE scope = @scope AND key = @key AND lock_token = @lock_token::uuid AND status = 'started';

-- name: GiveBack :execrows
-- The completer gives back a key it took over without acting on it: the
-- lease ends now and the takeover is not counted as a settle attempt.
UPDATE idem_keys
SET locked_until = now(), settle_attempts = greatest(settle_attempts - 1, 0)
WHERE scope = @scope AND key = @key AND lock_token = @lock_token::uuid AND status = 'started';

-- name: Finish :one
-- The fenced finish (idem_finish): false means the attempt lost the key.
SELECT idem_finish(@scope::text, @key::text, @lock_token::uuid, @response_status::integer,
                   @response_headers::jsonb, @response_body::bytea)::boolean AS finished;

-- name: Release :execrows
-- Gives a started key up when nothing was done under it, so that the next
-- request with the key starts afresh.
DELETE FROM idem_keys
WHERE scope = @scope AND key = @key AND lock_token = @lock_token::uuid AND status = 'started';

-- name: GetKey :one
SELECT status, response_status, response_headers, response_body,
       extract(epoch FROM locked_until - now())::double precision AS lease_left_seconds,
       extract(epoch FROM now() - created_at)::double precision AS age_seconds
FROM idem_keys
WHERE scope = @scope AND key = @key;

-- name: TrySweepLock :one
-- Lets one instance at a time sweep (Sweeper.Exclusive): a
-- transaction-level advisory lock, released by the batch's commit; the
-- sweeper passes the kit's name for the lock (SweepLockID).
SELECT pg_try_advisory_xact_lock(@lock_id::bigint);

-- name: Sweep :many
-- Deletes up to @batch answers finished more than @keep ago, oldest first,
-- and returns them. SKIP LOCKED passes over a key a claim is reading under
-- FOR UPDATE, and the LIMIT keeps every transaction short.
DELETE FROM idem_keys
WHERE (scope, key) IN (
    SELECT s.scope, s.key FROM idem_keys AS s
    WHERE s.kind = @kind::text AND s.status = 'finished' AND s.finished_at < now() - @keep::interval
    ORDER BY s.finished_at
    LIMIT @batch
    FOR UPDATE SKIP LOCKED
)
RETURNING scope, key, response_status, created_at;

-- name: Asked :many
-- Records that clients asked about started keys (told the key is in
-- progress, or that the database was away, or hung up while their claim
-- waited): each key's asked_at becomes now() less the ask's age in
-- seconds, unless it holds a later ask or the key was claimed later. The completer's grace counts from
-- it. A row locked at this moment (a finish under way, a stalled session,
-- an abandoned claim's session not yet gone) is skipped rather than waited
-- for, and returned: its ask is kept for the next flush, not dropped.
WITH asks AS (
    SELECT unnest(@scopes::text[]) AS scope, unnest(@keys::text[]) AS key, unnest(@agos::float8[]) AS ago
),
free AS (
    SELECT k.scope, k.key, asks.ago
    FROM idem_keys AS k JOIN asks ON k.scope = asks.scope AND k.key = asks.key
    WHERE k.status = 'started'
    FOR UPDATE OF k SKIP LOCKED
),
written AS (
    UPDATE idem_keys AS k
    -- Never before the key's claim: an ask noted before this key existed
    -- (held by a process cut off from the database while another's claim
    -- created it) counts from the claim, which is an ask too. greatest()
    -- ignores NULL, so without the coalesce a key's first ask could move
    -- the grace to before the key began.
    SET asked_at = greatest(coalesce(k.asked_at, k.created_at), now() - make_interval(secs => free.ago))
    FROM free
    WHERE k.scope = free.scope AND k.key = free.key
    RETURNING k.scope, k.key
)
SELECT asks.scope::text AS scope, asks.key::text AS key, asks.ago::float8 AS ago
FROM asks JOIN idem_keys AS k ON k.scope = asks.scope AND k.key = asks.key
WHERE k.status = 'started'
  AND NOT EXISTS (SELECT FROM free WHERE free.scope = asks.scope AND free.key = asks.key);

-- name: StatusUnderToken :one
-- The key's status when lock_token is still its attempt's: 'finished' once
-- a finish under it committed, 'started' while it did not. No row back
-- means another attempt took the key over, or it is gone.
SELECT status FROM idem_keys
WHERE scope = @scope AND key = @key AND lock_token = @lock_token::uuid;
