-- name: LockOrderMail :exec
-- Serialises the decisions of the mail jobs of one order (a redelivery
-- racing a duplicate) for the rest of the transaction: whether to send,
-- and the record once sent; never the sending itself. The lock is transaction-scoped, so a
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

-- name: ClaimMailSending :one
-- Takes the order's sending for this job's attempt, for @lease: a new
-- claim, or one left by an attempt of the same job (which River runs one at
-- a time) or by a job whose claim ran out (its worker died). No row back
-- means another job of the order is sending now.
INSERT INTO mail_sendings (customer_id, order_id, job_id, attempt, sending_until)
VALUES (@customer_id, @order_id, @job_id, @attempt, now() + @lease::interval)
ON CONFLICT (customer_id, order_id) DO UPDATE
SET job_id = excluded.job_id, attempt = excluded.attempt, sending_until = excluded.sending_until
WHERE mail_sendings.job_id = excluded.job_id OR mail_sendings.sending_until < now()
RETURNING true AS claimed;

-- name: EndMailSending :exec
-- Drops the order's sending claim once its mail is recorded (or found
-- recorded by another job).
DELETE FROM mail_sendings WHERE customer_id = @customer_id AND order_id = @order_id;
