-- +goose Up

-- What the background completer needs to finish an order nobody retries.
--
-- request is the priced order (lines, amount, currency) as the claim saw it:
-- the completer cannot price the cart again (prices may have changed since)
-- and must write the order the customer was charged for. It never holds the
-- card number. Keys claimed before this migration have none and are left to
-- their client's retry.
--
-- operation_id names one life of a key. The key sent to the payment provider
-- is derived from it as well as from (customer, key), so that once a key has
-- expired and is used again, the provider sees a new operation instead of
-- replaying the old charge. Keys claimed before this migration get the nil
-- UUID, which keeps the derivation they were charged with; the default is
-- dropped at once so that every new claim must name its operation.
ALTER TABLE idempotency_keys
    ADD COLUMN request      jsonb,
    ADD COLUMN operation_id uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
ALTER TABLE idempotency_keys ALTER COLUMN operation_id DROP DEFAULT;

-- Serves the completer's search for started keys whose lock has expired.
CREATE INDEX idempotency_keys_started_locked_until ON idempotency_keys (locked_until)
    WHERE status = 'started';

-- The audit trail: one row per state change of a key, stamped by the
-- database clock in the same statement as the change. No foreign key: the
-- trail must outlive the key (the "expired" event is written as the key is
-- deleted), and a key reused after expiry continues the same trail.
CREATE TABLE key_events (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id uuid        NOT NULL,
    key         text        NOT NULL,
    event       text        NOT NULL CHECK (event IN ('claimed', 'taken_over', 'finished', 'recovered', 'expired')),
    at          timestamptz NOT NULL DEFAULT now(),
    detail      jsonb       NOT NULL DEFAULT '{}'
);

-- One key's trail, in order.
CREATE INDEX key_events_customer_key ON key_events (customer_id, key, id);
-- The sweeper's search for old events.
CREATE INDEX key_events_at ON key_events (at);

-- +goose Down
DROP TABLE key_events;
DROP INDEX idempotency_keys_started_locked_until;
ALTER TABLE idempotency_keys DROP COLUMN operation_id, DROP COLUMN request;
