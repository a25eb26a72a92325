-- +goose Up

-- Refunds at the fake provider: full refunds only, so at most one per
-- charge, and one per idempotency key (a retry of a refund returns the same
-- refund).
CREATE TABLE provider.refunds (
    id              text        PRIMARY KEY,
    idempotency_key text        NOT NULL UNIQUE,
    charge_id       text        NOT NULL UNIQUE REFERENCES provider.charges (id),
    amount          bigint      NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE provider.refunds;
