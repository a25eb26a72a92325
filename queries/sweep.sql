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
