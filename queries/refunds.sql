-- name: HoldRefundKey :one
-- The first statement of a refund's reservation (internal/refund): the key
-- is still this attempt's, read through the kit's view under a share lock,
-- so that no takeover or release of it can commit before the reservation
-- does. No row: the key is another attempt's, or gone.
SELECT k.operation_id FROM idem_keys_v1 k
WHERE k.scope = @scope AND k.key = @key AND k.lock_token = @lock_token::uuid AND k.status = 'started'
FOR SHARE;

-- name: RefundOfKey :one
-- The refund a key reserved, if it reserved one: what an attempt that took
-- the key over, or the completer, carries on with.
SELECT * FROM order_refunds WHERE scope = @scope AND key = @key;

-- name: LockOrderForRefund :one
-- The order a refund is asked of, under its row lock for the rest of the
-- reservation's transaction: refunds of one order reserve one at a time,
-- and each sees what the one before reserved (RefundLeft is a statement of
-- its own, after this one, so under READ COMMITTED it sees their commits).
-- A cancel's window is judged by the database's clock (age_seconds).
SELECT o.customer_id, o.id, o.amount, o.currency, o.charge_id, o.cancelled_at, o.idempotency_key,
       extract(epoch FROM now() - o.created_at)::double precision AS age_seconds
FROM orders o
WHERE o.customer_id = @customer_id AND o.id = @order_id
FOR UPDATE;

-- name: RefundLeft :one
-- What is left to refund of an order: its amount less every refund that is
-- not failed (pending ones count: their money may be moving).
SELECT (o.amount - coalesce((SELECT sum(r.amount) FROM order_refunds r
                             WHERE r.customer_id = o.customer_id AND r.order_id = o.id AND r.state <> 'failed'), 0))::bigint AS left
FROM orders o
WHERE o.customer_id = @customer_id AND o.id = @order_id;

-- name: ReserveRefund :one
-- The refund's row, pending: the amount is reserved from then on.
INSERT INTO order_refunds (scope, key, id, customer_id, order_id, kind, amount, reason)
VALUES (@scope, @key, @id, @customer_id, @order_id, @kind, @amount, @reason)
RETURNING *;

-- name: MarkRefunded :one
-- The provider refunded: the row records its refund, in the transaction
-- that finishes the key (idem.Lock.FinishTx). Only a pending row moves.
UPDATE order_refunds SET state = 'refunded', provider_refund_id = @provider_refund_id, ended_at = now()
WHERE scope = @scope AND key = @key AND state = 'pending'
RETURNING *;

-- name: MarkRefundFailed :one
-- The provider refused the refund for good: the amount is no longer
-- reserved, in the transaction that finishes the key with the refusal.
UPDATE order_refunds SET state = 'failed', failure = @failure, ended_at = now()
WHERE scope = @scope AND key = @key AND state = 'pending'
RETURNING *;

-- name: CancelOrder :exec
-- A cancel that refunded marks its order cancelled and gives its stock back:
-- the order's sold reservations become returned and go back on hand
-- (migration 00200), in the transaction that finishes the cancel's key.
WITH cancelled AS (
    UPDATE orders SET cancelled_at = now()
    WHERE customer_id = @customer_id AND id = @order_id AND cancelled_at IS NULL
    RETURNING customer_id, idempotency_key
),
returned AS (
    UPDATE stock_reservations r SET state = 'returned', ended_at = now()
    FROM cancelled c
    WHERE r.scope = c.customer_id::text AND r.key = c.idempotency_key AND r.state = 'sold'
    RETURNING r.sku, r.quantity
)
UPDATE stock s SET on_hand = s.on_hand + back.quantity
FROM (SELECT sku, sum(quantity)::integer AS quantity FROM returned GROUP BY sku) AS back
WHERE s.sku = back.sku;

-- name: EnqueueRefundJobs :exec
-- The outbox of a refund: its jobs (the mail, the loyalty reversal) go into
-- River's job table in the transaction that finishes its key, so they exist
-- exactly when the refund's record does. The columns are those of
-- FinishOrder's jobs (queries/orders.sql).
INSERT INTO river_job (kind, args, queue, priority, max_attempts, state, scheduled_at, tags, metadata)
SELECT consumer.kind, jsonb_build_object('customer_id', @customer_id::uuid, 'order_id', @order_id::uuid, 'refund_id', @refund_id::uuid),
       'default', 1, 25, 'available'::river_job_state, now(), '{order_refunded}'::varchar(255)[], '{}'::jsonb
FROM unnest(@job_kinds::text[]) AS consumer(kind);

-- name: RefundsOfOrder :many
-- An order's refunds, oldest first, for its page and the operator's.
SELECT * FROM order_refunds
WHERE customer_id = @customer_id AND order_id = @order_id
ORDER BY created_at, id;

-- name: RefundForMail :one
-- A refund its mail tells of, with its order, and whether the mail is sent.
SELECT r.id, r.customer_id, r.order_id, r.kind, r.amount, r.ended_at, o.currency, o.amount AS order_amount,
       EXISTS (SELECT FROM sent_refund_mails m WHERE m.refund_id = r.id) AS sent
FROM order_refunds r JOIN orders o ON o.customer_id = r.customer_id AND o.id = r.order_id
WHERE r.customer_id = @customer_id AND r.id = @refund_id;

-- name: RecordRefundMail :execrows
INSERT INTO sent_refund_mails (refund_id, message_id, recipient, job_id, attempt)
VALUES (@refund_id, @message_id, @recipient, @job_id, @attempt)
ON CONFLICT (refund_id) DO NOTHING;
