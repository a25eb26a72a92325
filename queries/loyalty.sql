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
-- A customer's balance is the sum over their ledger less the sum of their
-- reversals (refunds take back points, migration 00200).
SELECT (coalesce((SELECT sum(points) FROM loyalty_ledger l WHERE l.customer_id = @customer_id), 0)
      - coalesce((SELECT sum(points) FROM loyalty_reversals v WHERE v.customer_id = @customer_id), 0))::bigint AS points;

-- name: OrderPoints :one
-- The points an order earned, and whether the loyalty job has run yet.
SELECT EXISTS (SELECT FROM loyalty_ledger l WHERE l.customer_id = @customer_id AND l.order_id = @order_id) AS awarded,
       coalesce((SELECT l.points FROM loyalty_ledger l WHERE l.customer_id = @customer_id AND l.order_id = @order_id), 0)::bigint AS points;

-- name: LockOrderPoints :exec
-- Serialises the reversals of one order's refunds (two refunds' jobs may
-- run at once) for the rest of the transaction.
SELECT pg_advisory_xact_lock(hashtextextended('loyalty_reversals:' || (@order_id::uuid)::text, 0));

-- name: ReversePoints :execrows
-- A refund's reversal, once: what the order's refunds have refunded so far
-- takes back its points (refunded / 100, whole units, as the award is
-- amount / 100), less what earlier reversals of the order took back. So an
-- order's reversals add up to its refunded total / 100 whatever order the
-- jobs run in, and a full refund takes back exactly the award. A second
-- delivery of the job finds its row and inserts nothing. The sums are cast
-- to bigint before dividing: sum(bigint) is numeric, whose division keeps
-- the fraction, and the insert would round it to the nearest point.
INSERT INTO loyalty_reversals (refund_id, customer_id, order_id, points, job_id)
SELECT r.id, r.customer_id, r.order_id,
       greatest(0, (SELECT coalesce(sum(x.amount), 0)::bigint FROM order_refunds x
                    WHERE x.customer_id = r.customer_id AND x.order_id = r.order_id AND x.state = 'refunded') / 100
                   - (SELECT coalesce(sum(v.points), 0)::bigint FROM loyalty_reversals v
                      WHERE v.customer_id = r.customer_id AND v.order_id = r.order_id)),
       @job_id::bigint
FROM order_refunds r
WHERE r.id = @refund_id AND r.state = 'refunded'
ON CONFLICT (refund_id) DO NOTHING;
