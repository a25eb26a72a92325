-- The operator's "Find an order" (the admin listener's /orders): an order
-- found from what a customer quotes, and everything the shop knows of it.

-- name: OrdersByNumber :many
-- The orders whose number (views.OrderNumber: the id's last eight hex
-- digits) is the one quoted; orders_number makes it an index scan. An
-- order id quoted whole is found the same way, then checked whole.
SELECT o.customer_id, o.id, o.amount, o.currency, o.charge_id, o.created_at, c.name AS customer_name
FROM orders o JOIN customers c ON c.id = o.customer_id
WHERE right(replace(o.id::text, '-', ''), 8) = lower(@number::text)
ORDER BY o.created_at DESC
LIMIT @max_rows;

-- name: OrdersByIntent :many
-- The order that a PaymentIntent (pi_…) paid, through orders_charge_id.
SELECT o.customer_id, o.id, o.amount, o.currency, o.charge_id, o.created_at, c.name AS customer_name
FROM orders o JOIN customers c ON c.id = o.customer_id
WHERE o.charge_id = @intent_id
LIMIT @max_rows;

-- name: OrdersOfCustomer :many
-- A customer's latest orders (orders_pkey leads with the customer).
SELECT o.customer_id, o.id, o.amount, o.currency, o.charge_id, o.created_at, c.name AS customer_name
FROM orders o JOIN customers c ON c.id = o.customer_id
WHERE o.customer_id = @customer_id
ORDER BY o.created_at DESC
LIMIT @max_rows;

-- name: CustomersNamed :many
-- The customers whose name holds the text quoted, case ignored, with how
-- many orders each has. A scan of customers: an operator's search, rare,
-- and bounded by max_rows.
SELECT c.id, c.name, c.created_at, (SELECT count(*) FROM orders o WHERE o.customer_id = c.id) AS orders
FROM customers c
WHERE c.name ILIKE '%' || replace(replace(replace(@name::text, '\', '\\'), '%', '\%'), '_', '\_') || '%'
ORDER BY c.created_at DESC
LIMIT @max_rows;

-- name: KeyOfIntent :one
-- The key whose operation made a PaymentIntent, when no order holds it (a
-- payment declined, canceled, awaiting authentication, or refunded).
SELECT (k.scope)::uuid AS customer_id, k.key, k.status, k.response_status, k.created_at
FROM order_keys ok JOIN idem_keys_v1 k ON k.scope = ok.scope AND k.key = ok.key
WHERE ok.payment_intent_id = @intent_id;

-- name: OperatorOrder :one
-- One order with its customer, its key (gone once the sweeper deleted it)
-- and what the key's row says of the payment.
SELECT o.customer_id, o.id, o.idempotency_key, o.amount, o.currency, o.charge_id, o.items, o.created_at, o.cancelled_at,
       c.name AS customer_name,
       k.status AS key_status, k.response_status, k.created_at AS key_created_at, k.finished_at AS key_finished_at,
       k.settle_attempts, k.parked_at,
       ok.provider_key, ok.cart_id, ok.cart_version
FROM orders o
JOIN customers c ON c.id = o.customer_id
LEFT JOIN idem_keys_v1 k ON k.scope = o.customer_id::text AND k.key = o.idempotency_key
LEFT JOIN order_keys ok ON ok.scope = k.scope AND ok.key = k.key
WHERE o.customer_id = @customer_id AND o.id = @id;

-- name: OrderJobs :many
-- The outbox's jobs of an order (river_job_args_index), newest first.
SELECT id, kind, state, attempt, max_attempts, created_at, finalized_at,
       coalesce((errors[array_upper(errors, 1)])->>'error', '')::text AS last_error
FROM river_job
WHERE args @> jsonb_build_object('order_id', @order_id::uuid)
ORDER BY id DESC
LIMIT 20;

-- name: OrderMail :many
-- The order's confirmation mail, once recorded sent.
SELECT message_id, recipient, job_id, attempt, sent_at
FROM sent_mails WHERE customer_id = @customer_id AND order_id = @order_id;

-- name: IntentEvents :many
-- The provider's webhook events about a PaymentIntent, as the shop
-- received them (stripe_events_payment_intent).
SELECT event_id, type, effect, received_at FROM stripe_events
WHERE payment_intent_id = @intent_id ORDER BY received_at, event_id LIMIT 50;

-- name: IntentRefunds :many
-- The refunds the reconciler made of a PaymentIntent.
SELECT refund_id, amount, currency, lost_operation, at FROM reconciled_refunds WHERE charge_id = @intent_id;

-- name: AttentionCounts :one
-- How many items wait for an operator or for the shop, by kind, for the
-- top of /orders: keys started past their lock (the completer's to
-- settle), parked keys (an operator's), keys awaiting the shopper's bank,
-- refunds made, foreign intents and refunds refused for good.
SELECT
  (SELECT count(*) FROM idem_keys_v1 WHERE kind = 'order' AND status = 'started' AND parked_at IS NULL AND locked_until < now()) AS stuck,
  (SELECT count(*) FROM idem_keys_v1 WHERE kind = 'order' AND status = 'started' AND parked_at IS NOT NULL) AS parked,
  (SELECT count(*) FROM order_keys ok JOIN idem_keys_v1 k ON k.scope = ok.scope AND k.key = ok.key
     WHERE k.status = 'started' AND ok.awaiting_authentication_at IS NOT NULL) AS awaiting,
  (SELECT count(*) FROM reconciled_refunds) AS refunded,
  (SELECT count(*) FROM foreign_intents) AS foreign_intents,
  (SELECT count(*) FROM refused_refunds) AS refused_refunds;

-- name: AttentionKeys :many
-- The started order keys an operator may be asked about: past their lock,
-- parked, or awaiting the shopper's bank; oldest first.
SELECT (k.scope)::uuid AS customer_id, k.key, k.created_at, k.locked_until, k.parked_at, k.settle_attempts,
       ok.payment_intent_id, ok.awaiting_authentication_at,
       CASE WHEN k.parked_at IS NOT NULL THEN 'parked'
            WHEN ok.awaiting_authentication_at IS NOT NULL THEN 'awaiting the bank'
            ELSE 'past its lock' END::text AS state
FROM idem_keys_v1 k LEFT JOIN order_keys ok ON ok.scope = k.scope AND ok.key = k.key
WHERE k.kind = 'order' AND k.status = 'started'
  AND (k.parked_at IS NOT NULL OR k.locked_until < now() OR ok.awaiting_authentication_at IS NOT NULL)
ORDER BY k.created_at
LIMIT @max_rows;

-- name: LatestRefunds :many
-- The reconciler's latest refunds, newest first.
SELECT charge_id, refund_id, customer_id, key, amount, currency, lost_operation, at
FROM reconciled_refunds ORDER BY at DESC LIMIT @max_rows;
