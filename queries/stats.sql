-- name: Totals :one
-- Counts across the whole shop, for the tests' harness (apptest.Stats); a
-- full count is fine at test sizes. (The charges are the provider's.)
SELECT
    (SELECT count(*) FROM orders) AS orders,
    (SELECT count(*) FROM idem_keys_v1 k JOIN order_keys o USING (scope, key) WHERE k.status = 'started') AS keys_started,
    (SELECT count(*) FROM idem_keys_v1 k JOIN order_keys o USING (scope, key) WHERE k.status = 'finished') AS keys_finished,
    (SELECT count(*) FROM idem_keys_v1 k JOIN order_keys o USING (scope, key)
     WHERE k.status = 'started' AND k.parked_at IS NOT NULL) AS keys_parked,
    (SELECT count(*) FROM reconciled_refunds) AS refunds;
