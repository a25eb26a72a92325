-- +goose Up

-- The fake provider's final "no charge" verdict, modelled on cancelling a
-- Stripe PaymentIntent: once an operation's idempotency key is canceled, a
-- create-charge call with that key (one still in flight, or a late retry)
-- charges nothing and answers "canceled". The provider decides cancel and
-- create for one key one at a time (a transaction-scoped advisory lock on
-- the key), so a key ends up with a charge or a cancellation, never both.
CREATE TABLE provider.canceled_keys (
    idempotency_key text        PRIMARY KEY,
    canceled_at     timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE provider.canceled_keys;
