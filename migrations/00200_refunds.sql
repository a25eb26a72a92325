-- +goose Up

-- Cancellations and refunds of paid orders (issue 40), each under an
-- idempotency key of its own in the kit's table (kind 'refund'): a
-- customer's cancel (scope: the customer) or an operator's refund (scope:
-- 'operator'). One row per key, written when the key's attempt reserves the
-- amount (internal/refund), and never deleted: the key is swept after its
-- retention, the refund stays.
--
-- What may still be refunded of an order is its amount less every refund
-- not failed (pending or refunded), reckoned under the order's row lock in
-- the transaction that reserves: two refunds racing serialize on that lock,
-- and the second sees the first. The constraint below is the guard of last
-- resort: the same sum, per order, checked when a row is written.
CREATE TABLE order_refunds (
    scope              text        NOT NULL,
    key                text        NOT NULL,
    -- The refund's own id: the key's operation id, which every attempt
    -- that takes the key over keeps, and from which the provider's
    -- idempotency key is derived (refund.ProviderKey).
    id                 uuid        NOT NULL UNIQUE,
    customer_id        uuid        NOT NULL,
    order_id           uuid        NOT NULL,
    kind               text        NOT NULL CHECK (kind IN ('cancel', 'refund')),
    amount             bigint      NOT NULL CHECK (amount > 0),
    reason             text        NOT NULL DEFAULT '',
    state              text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'refunded', 'failed')),
    provider_refund_id text        UNIQUE,
    failure            text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    ended_at           timestamptz,
    PRIMARY KEY (scope, key),
    FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, id),
    CHECK ((state = 'refunded') = (provider_refund_id IS NOT NULL))
);

CREATE INDEX order_refunds_order ON order_refunds (customer_id, order_id);

-- The guard of last resort: an order's refunds that are not failed never
-- add up to more than its amount. Deferred to the end of the transaction
-- and run for every row written, so it sees the transaction's own writes.
-- +goose StatementBegin
CREATE FUNCTION order_refunds_within_amount() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT coalesce(sum(r.amount), 0) FROM order_refunds r
        WHERE r.customer_id = NEW.customer_id AND r.order_id = NEW.order_id AND r.state <> 'failed')
       > (SELECT o.amount FROM orders o WHERE o.customer_id = NEW.customer_id AND o.id = NEW.order_id) THEN
        RAISE EXCEPTION 'refunds of order % exceed its amount', NEW.order_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'order_refunds_within_amount';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE CONSTRAINT TRIGGER order_refunds_within_amount AFTER INSERT OR UPDATE ON order_refunds
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION order_refunds_within_amount();

-- A cancelled order: refunded in full by its customer's cancel, its stock
-- back on hand.
ALTER TABLE orders ADD COLUMN cancelled_at timestamptz;

-- What a cancel gives back: the order's sold reservations become returned,
-- and their quantities go back on hand, so that at every moment
--     received = on_hand + reserved + sold
-- still holds, returned counting in none of them.
ALTER TABLE stock_reservations DROP CONSTRAINT stock_reservations_state_check;
ALTER TABLE stock_reservations ADD CONSTRAINT stock_reservations_state_check
    CHECK (state IN ('reserved', 'sold', 'released', 'returned'));

-- The loyalty ledger's reversals: one row per refund, written by the
-- reversal job (internal/loyalty) in the transaction that completes it. A
-- refund takes back the points of what it refunded: an order's reversals add
-- up to its refunded total / 100 (whole units, as its award is its amount /
-- 100), so a full refund takes back exactly what was awarded. A customer's
-- balance is the sum of the ledger less the sum of the reversals.
CREATE TABLE loyalty_reversals (
    refund_id   uuid        PRIMARY KEY REFERENCES order_refunds (id),
    customer_id uuid        NOT NULL,
    order_id    uuid        NOT NULL,
    points      bigint      NOT NULL CHECK (points >= 0),
    job_id      bigint      NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (customer_id, order_id) REFERENCES orders (customer_id, id)
);

-- The refund mails sent, one per refund, recorded by the mail job in the
-- transaction that completes it, after the SMTP server accepted it.
CREATE TABLE sent_refund_mails (
    refund_id  uuid        PRIMARY KEY REFERENCES order_refunds (id),
    message_id text        NOT NULL UNIQUE,
    recipient  text        NOT NULL,
    job_id     bigint      NOT NULL,
    attempt    integer     NOT NULL,
    sent_at    timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE sent_refund_mails;
DROP TABLE loyalty_reversals;
UPDATE stock_reservations SET state = 'sold' WHERE state = 'returned';
ALTER TABLE stock_reservations DROP CONSTRAINT stock_reservations_state_check;
ALTER TABLE stock_reservations ADD CONSTRAINT stock_reservations_state_check
    CHECK (state IN ('reserved', 'sold', 'released'));
ALTER TABLE orders DROP COLUMN cancelled_at;
DROP TABLE order_refunds;
DROP FUNCTION order_refunds_within_amount();
