-- name: TrySweepLock :one
-- Lets one instance at a time sweep: a transaction-level advisory lock, held
-- by the batch's transaction and released by its commit. The constant is
-- this application's name for the sweeper's lock.
SELECT pg_try_advisory_xact_lock(7305812216405213249);

-- name: SweepKeys :one
-- Deletes up to batch_size finished keys created before now() - retention,
-- oldest first, and records each as "expired". A started key is never
-- deleted, however old: its outcome is not known yet (the completer or a
-- retry settles it first). SKIP LOCKED passes over a key a request is
-- reading under FOR UPDATE, and the LIMIT keeps every transaction short.
WITH doomed AS (
    SELECT d.customer_id, d.key
    FROM idempotency_keys d
    WHERE d.status = 'finished' AND d.created_at < now() - @retention::interval
    ORDER BY d.created_at
    LIMIT @batch_size
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM idempotency_keys k
    USING doomed
    WHERE k.customer_id = doomed.customer_id AND k.key = doomed.key AND k.status = 'finished'
    RETURNING k.customer_id, k.key, k.response_code, k.created_at
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT customer_id, key, 'expired', jsonb_build_object('status', response_code, 'created_at', created_at)
    FROM deleted
)
SELECT count(*) FROM deleted;

-- name: SweepKeyEvents :one
-- Deletes up to batch_size audit events older than keep, oldest first.
WITH doomed AS (
    SELECT e.id
    FROM key_events e
    WHERE e.at < now() - @keep::interval
    ORDER BY e.at
    LIMIT @batch_size
),
deleted AS (
    DELETE FROM key_events k
    USING doomed
    WHERE k.id = doomed.id
    RETURNING k.id
)
SELECT count(*) FROM deleted;
