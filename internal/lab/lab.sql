-- name: ListCustomerKeys :many
-- A customer's keys as the double-click lab shows them, oldest first. The
-- lock's remaining time is measured by the database clock, like every
-- decision about a lock.
SELECT key, status, locked_until, (locked_until - now())::interval AS lock_remaining,
       lock_token, response_status, operation_id, created_at, (parked_at IS NOT NULL)::boolean AS parked
FROM idem_keys
WHERE scope = (@customer_id::uuid)::text
ORDER BY created_at, key
LIMIT @max_rows;

-- name: CountCustomerOrders :one
SELECT count(*) FROM orders WHERE customer_id = @customer_id;

-- name: OrderLoyaltyJobs :many
-- The loyalty jobs of a customer's orders, as the worker-crash scenario
-- shows them: how many attempts each took, and the first attempt's error.
SELECT id, state::text AS state, attempt::integer AS attempt,
       coalesce(errors[1]->>'error', '')::text AS first_error
FROM river_job
WHERE kind = 'loyalty_points' AND args->>'customer_id' = (@customer_id::uuid)::text
ORDER BY id;

-- name: CustomerLedger :one
-- A customer's loyalty ledger: its rows and their sum.
SELECT count(*) AS rows, coalesce(sum(points), 0)::bigint AS points
FROM loyalty_ledger
WHERE customer_id = @customer_id;
