-- name: LockOrderMail :exec
-- Serialises the decisions of the mail jobs of one order (a redelivery
-- racing a duplicate) for the rest of the transaction: whether to send,
-- and the record once sent; never the sending itself. The lock is transaction-scoped, so a
-- crashed worker's lock goes with its connection. The check of the record
-- (OrderForMail) must be a statement of its own, after this one: under READ COMMITTED a statement
-- sees the rows committed before it began, so a check in this statement
-- would miss the record of the job it waited for.
SELECT pg_advisory_xact_lock(hashtextextended('sent_mails:' || (@order_id::uuid)::text, 0));

-- name: OrderForMail :one
-- The order a mail confirms, with whether it is sent, and this job's claim
-- to send it (claimed), in one statement after LockOrderMail's: when the
-- mail is recorded sent, nothing is claimed. The claim is taken for @lease:
-- a new one, or one left by an attempt of the same job (which River runs
-- one at a time) or by a job whose claim ran out (its worker died); not
-- claimed while another job of the order is sending it. One statement sees
-- one snapshot, taken after the lock was granted, so it sees the record of
-- a job it waited for.
WITH sent AS (
    SELECT EXISTS (SELECT FROM sent_mails WHERE customer_id = @customer_id AND order_id = @order_id) AS sent
), claim AS (
    INSERT INTO mail_sendings (customer_id, order_id, job_id, attempt, sending_until)
    SELECT @customer_id, @order_id, @job_id, @attempt, now() + @lease::interval
    WHERE NOT (SELECT sent FROM sent)
    ON CONFLICT (customer_id, order_id) DO UPDATE
    SET job_id = excluded.job_id, attempt = excluded.attempt, sending_until = excluded.sending_until
    WHERE mail_sendings.job_id = excluded.job_id OR mail_sendings.sending_until < now()
    RETURNING true AS claimed
)
SELECT o.id, o.customer_id, o.amount, o.currency, o.items, o.created_at,
       (SELECT sent FROM sent)::boolean AS sent,
       coalesce((SELECT claimed FROM claim), false)::boolean AS claimed
FROM orders o
WHERE o.customer_id = @customer_id AND o.id = @order_id;

-- name: RecordSentMail :execrows
-- Records the order's mail as sent and drops the order's sending claim, in
-- one statement.
WITH ended AS (
    DELETE FROM mail_sendings WHERE customer_id = @customer_id AND order_id = @order_id
)
INSERT INTO sent_mails (customer_id, order_id, message_id, recipient, job_id, attempt)
VALUES (@customer_id, @order_id, @message_id, @recipient, @job_id, @attempt)
ON CONFLICT (customer_id, order_id) DO NOTHING;

-- name: EndMailSending :exec
-- Drops the order's sending claim once its mail is recorded (or found
-- recorded by another job).
DELETE FROM mail_sendings WHERE customer_id = @customer_id AND order_id = @order_id;
