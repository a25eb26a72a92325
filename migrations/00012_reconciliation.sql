-- +goose Up

-- The key the shop sent the provider for this life of the key
-- (checkout.ProviderKey), stored at the claim so that the reconciler can go
-- from a charge in the provider's list back to the key that made it. Keys
-- claimed before this migration have none; the reconciler cannot match their
-- charges to a key and leaves them alone.
ALTER TABLE idempotency_keys ADD COLUMN provider_key text;
CREATE INDEX idempotency_keys_provider_key ON idempotency_keys (provider_key);

-- Orders are looked up by charge: the reconciler asks "has this charge an
-- order?" for every charge the provider lists.
CREATE INDEX orders_charge_id ON orders (charge_id);

-- How far the reconciler has read the provider's list of charges: the id of
-- the last charge it settled. One row; every instance shares it.
CREATE TABLE reconciler_cursor (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    after      text        NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO reconciler_cursor DEFAULT VALUES;

-- Every charge the reconciler refunded, once: two reconcilers racing for
-- one orphan both call the provider's idempotent refund, but only the one
-- whose insert here succeeds records the audit event and counts it.
CREATE TABLE reconciled_refunds (
    charge_id   text        PRIMARY KEY,
    refund_id   text        NOT NULL,
    customer_id uuid,
    key         text,
    amount      bigint      NOT NULL,
    currency    text        NOT NULL,
    at          timestamptz NOT NULL DEFAULT now()
);

-- A poison key: one the completer failed to settle max-attempts times. It is
-- parked (parked_at set) and left for an operator instead of being taken
-- over forever. It stays started, so a client's retry may still settle it.
ALTER TABLE idempotency_keys
    ADD COLUMN settle_attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN parked_at       timestamptz;

-- New audit events: "refunded" (the reconciler refunded a charge the key's
-- operation left without an order) and "parked".
ALTER TABLE key_events DROP CONSTRAINT key_events_event_check;
ALTER TABLE key_events ADD CONSTRAINT key_events_event_check
    CHECK (event IN ('claimed', 'taken_over', 'finished', 'recovered', 'expired', 'refunded', 'parked'));

-- +goose Down
-- The events this migration introduced cannot stay under the old check.
DELETE FROM key_events WHERE event IN ('refunded', 'parked');
ALTER TABLE key_events DROP CONSTRAINT key_events_event_check;
ALTER TABLE key_events ADD CONSTRAINT key_events_event_check
    CHECK (event IN ('claimed', 'taken_over', 'finished', 'recovered', 'expired'));
ALTER TABLE idempotency_keys DROP COLUMN parked_at, DROP COLUMN settle_attempts;
DROP TABLE reconciled_refunds;
DROP TABLE reconciler_cursor;
DROP INDEX orders_charge_id;
DROP INDEX idempotency_keys_provider_key;
ALTER TABLE idempotency_keys DROP COLUMN provider_key;
