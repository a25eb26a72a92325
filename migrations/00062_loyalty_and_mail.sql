-- +goose Up

-- The loyalty ledger: one row per order, written by the loyalty job
-- (internal/loyalty) in the transaction that marks the job completed. The
-- primary key is the order's, so a redelivered or duplicated job inserts
-- nothing (ON CONFLICT DO NOTHING). A customer's balance is the SUM of
-- their rows, never a stored counter that a replay could add to twice.
CREATE TABLE loyalty_ledger (
    customer_id uuid        NOT NULL,
    order_id    uuid        NOT NULL,
    points      bigint      NOT NULL CHECK (points >= 0),
    job_id      bigint      NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (customer_id, order_id),
    FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, id)
);

-- The confirmation mails sent, one row per order, written by the mail job
-- (internal/mail) in the transaction that marks the job completed, after
-- the SMTP server accepted the message. message_id is derived from the
-- order placed event, so a mail sent again after a crash carries the same
-- Message-ID.
CREATE TABLE sent_mails (
    customer_id uuid        NOT NULL,
    order_id    uuid        NOT NULL,
    message_id  text        NOT NULL UNIQUE,
    recipient   text        NOT NULL,
    job_id      bigint      NOT NULL,
    attempt     integer     NOT NULL,
    sent_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (customer_id, order_id),
    FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, id)
);

-- +goose Down
DROP TABLE sent_mails;
DROP TABLE loyalty_ledger;
