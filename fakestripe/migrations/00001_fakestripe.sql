-- +goose Up

-- The fake Stripe keeps its state in a schema of its own, applied by the
-- fake itself (fakestripe.Migrate, version table fakestripe_db_version), as
-- Stripe keeps its state in its own database: it outlives a crash of the
-- shop, and a failover of the shop's database rolls back nothing here.
CREATE SCHEMA IF NOT EXISTS fakestripe;

-- Stripe's idempotency: the first answer to a key, replayed to every later
-- request with the key and the same method, path and parameters
-- (request_hash); other parameters are refused. The answer is stored in the
-- transaction of the request's effect, so an effect and its answer exist
-- together or not at all.
CREATE TABLE fakestripe.idempotency_keys (
    key          text        PRIMARY KEY,
    request_hash bytea       NOT NULL,
    status       integer     NOT NULL,
    body         bytea       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- PaymentIntents. created is Stripe's `created` (Unix seconds); seq orders
-- intents created in the same second, for the list (newest first).
CREATE TABLE fakestripe.payment_intents (
    id                  text        PRIMARY KEY,
    seq                 bigserial   NOT NULL UNIQUE,
    amount              bigint      NOT NULL CHECK (amount > 0),
    currency            text        NOT NULL,
    description         text,
    metadata            jsonb       NOT NULL DEFAULT '{}',
    status              text        NOT NULL CHECK (status IN ('requires_payment_method', 'requires_confirmation',
                                                               'succeeded', 'canceled')),
    payment_method      text,
    latest_charge       text,
    last_payment_error  jsonb,
    canceled_at         bigint,
    cancellation_reason text,
    created             bigint      NOT NULL DEFAULT floor(extract(epoch FROM now()))::bigint
);

-- Full refunds only: one per PaymentIntent.
CREATE TABLE fakestripe.refunds (
    id                text   PRIMARY KEY,
    payment_intent_id text   NOT NULL UNIQUE REFERENCES fakestripe.payment_intents (id),
    charge            text   NOT NULL,
    amount            bigint NOT NULL,
    currency          text   NOT NULL,
    created           bigint NOT NULL DEFAULT floor(extract(epoch FROM now()))::bigint
);

-- +goose Down
DROP SCHEMA fakestripe CASCADE;
