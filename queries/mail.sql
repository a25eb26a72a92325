-- name: LockOrderMail :exec
-- Serialises the mail jobs of one order (a redelivery racing a duplicate)
-- for the rest of the transaction. The lock is transaction-scoped, so a
-- crashed worker's lock goes with its connection. MailSent must be a
-- statement of its own, after this one: under READ COMMITTED a statement
-- sees the rows committed before it began, so a check in this statement
-- would miss the record of the job it waited for.
SELECT pg_advisory_xact_lock(hashtextextended('sent_mails:' || (@order_id::uuid)::text, 0));

-- name: MailSent :one
SELECT EXISTS (SELECT FROM sent_mails WHERE customer_id = @customer_id AND order_id = @order_id) AS sent;

-- name: OrderForMail :one
SELECT id, customer_id, amount, currency, items, created_at
FROM orders
WHERE customer_id = @customer_id AND id = @id;

-- name: RecordSentMail :execrows
INSERT INTO sent_mails (customer_id, order_id, message_id, recipient, job_id, attempt)
VALUES (@customer_id, @order_id, @message_id, @recipient, @job_id, @attempt)
ON CONFLICT (customer_id, order_id) DO NOTHING;
