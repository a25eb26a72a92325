-- +goose Up

-- The shop pays through Stripe's PaymentIntents (issue 24). The fake
-- provider no longer lives in the shop's migrations: it keeps its state in
-- a schema of its own with migrations of its own (internal/fakestripe),
-- on the shop's server for `make run` and on a server of its own for
-- `web provider`, as Stripe keeps its state on its own.
DROP SCHEMA provider CASCADE;

-- The PaymentIntent of a key's operation, stored by the attempt that
-- created it with a statement fenced by its lock token (StoreIntent),
-- before the intent is confirmed: an intent whose id was never stored was
-- never confirmed, so it never charged. The completer settles a key by
-- this id (retrieve, cancel); the reconciler and the webhook handler go
-- from an intent back to its key by it or by the intent's metadata.
ALTER TABLE order_keys ADD COLUMN payment_intent_id text UNIQUE;

-- The reconciler reads Stripe's list of PaymentIntents, whose ids are not
-- time-ordered: its cursor is the creation time (Unix seconds, Stripe's
-- `created`) before which every intent is settled.
ALTER TABLE reconciler_cursor ADD COLUMN created_from bigint NOT NULL DEFAULT 0;

-- reconciled_refunds.charge_id now holds the PaymentIntent refunded. A
-- lost operation's refund (its key row lost, or the key reused for another
-- operation) names its customer and key from the intent's metadata, so
-- "key IS NULL" no longer tells it: lost_operation does.
ALTER TABLE reconciled_refunds ADD COLUMN lost_operation boolean NOT NULL DEFAULT false;
UPDATE reconciled_refunds SET lost_operation = true WHERE key IS NULL;

-- The webhook inbox: one row per Stripe event handled, with the effect it
-- had, written in the transaction of that effect, so that a redelivered
-- event (Stripe delivers at least once, and out of order) changes nothing
-- twice.
CREATE TABLE stripe_events (
    event_id          text        PRIMARY KEY,
    type              text        NOT NULL,
    payment_intent_id text        NOT NULL DEFAULT '',
    customer_id       uuid,
    key               text,
    effect            text        NOT NULL,
    created           bigint      NOT NULL,
    received_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stripe_events_payment_intent ON stripe_events (payment_intent_id);

-- +goose Down
DROP TABLE stripe_events;
ALTER TABLE reconciled_refunds DROP COLUMN lost_operation;
ALTER TABLE reconciler_cursor DROP COLUMN created_from;
ALTER TABLE order_keys DROP COLUMN payment_intent_id;
CREATE SCHEMA provider;
CREATE TABLE provider.charges (
    id              text        PRIMARY KEY,
    idempotency_key text        NOT NULL UNIQUE,
    params_hash     bytea       NOT NULL,
    amount          bigint      NOT NULL,
    currency        text        NOT NULL,
    card_last4      text        NOT NULL,
    description     text        NOT NULL DEFAULT '',
    status          text        NOT NULL CHECK (status IN ('succeeded', 'declined')),
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE provider.canceled_keys (
    idempotency_key text        PRIMARY KEY,
    canceled_at     timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE provider.refunds (
    id              text        PRIMARY KEY,
    idempotency_key text        NOT NULL UNIQUE,
    charge_id       text        NOT NULL UNIQUE REFERENCES provider.charges (id),
    amount          bigint      NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
