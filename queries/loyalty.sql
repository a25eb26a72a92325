-- name: AwardPoints :execrows
-- The loyalty job's effect: the order's points, once. Points are whole
-- units of the order's amount (minor units / 100), read from the order
-- itself, not from the job's arguments. A second delivery of the job finds
-- the row and inserts nothing.
INSERT INTO loyalty_ledger (customer_id, order_id, points, job_id)
SELECT o.customer_id, o.id, o.amount / 100, @job_id::bigint
FROM orders o
WHERE o.customer_id = @customer_id AND o.id = @order_id
ON CONFLICT (customer_id, order_id) DO NOTHING;

-- name: PointsBalance :one
-- A customer's balance is the sum over their ledger.
SELECT coalesce(sum(points), 0)::bigint AS points
FROM loyalty_ledger
WHERE customer_id = @customer_id;

-- name: OrderPoints :one
-- The points an order earned, and whether the loyalty job has run yet.
SELECT EXISTS (SELECT FROM loyalty_ledger l WHERE l.customer_id = @customer_id AND l.order_id = @order_id) AS awarded,
       coalesce((SELECT l.points FROM loyalty_ledger l WHERE l.customer_id = @customer_id AND l.order_id = @order_id), 0)::bigint AS points;
