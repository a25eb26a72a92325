-- name: DemoStats :one
-- Totals for the demo controls; a full count is fine at demo sizes.
SELECT
    (SELECT count(*) FROM provider.charges WHERE status = 'succeeded') AS charges,
    (SELECT count(*) FROM orders) AS orders,
    (SELECT count(*) FROM idempotency_keys WHERE status = 'started') AS keys_started,
    (SELECT count(*) FROM idempotency_keys WHERE status = 'finished') AS keys_finished,
    (SELECT count(*) FROM idempotency_keys WHERE status = 'started' AND parked_at IS NOT NULL) AS keys_parked,
    (SELECT count(*) FROM reconciled_refunds) AS refunds;
