-- +goose Up

-- A confirmation mail being sent: the claim a mail job takes, in a short
-- transaction of its own, before it talks to the SMTP server with no
-- database connection held (a slow or stalled SMTP server must not hold
-- the pool the orders need). One row per order: a second job of the same
-- order finds it and waits (snoozes) instead of sending beside it. The row
-- is deleted when the mail is recorded in sent_mails; one left behind by a
-- worker that died is taken over once sending_until has passed, or at once
-- by the same job's next attempt.
CREATE TABLE mail_sendings (
    customer_id   uuid        NOT NULL,
    order_id      uuid        NOT NULL,
    job_id        bigint      NOT NULL,
    attempt       integer     NOT NULL,
    sending_until timestamptz NOT NULL,
    PRIMARY KEY (customer_id, order_id),
    FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, id)
);

-- +goose Down
DROP TABLE mail_sendings;
