-- +goose Up
-- Refunds as Stripe makes them: any number per PaymentIntent, each of part
-- of what is left (amount absent: all of it), each its own object with its
-- reason and metadata, never more in all than the charge.
--
-- amount_refunded is kept on the intent's row, not summed from the
-- refunds: a refund decides under the intent's row lock (FOR UPDATE), and
-- READ COMMITTED re-reads the locked row once the other refund commits,
-- but a subquery of the same statement would still see the old snapshot
-- and miss the refund it waited for. The CHECK is the last word should a
-- handler ever decide on a stale sum.
ALTER TABLE fakestripe.refunds DROP CONSTRAINT refunds_payment_intent_id_key;
CREATE INDEX refunds_payment_intent_id_idx ON fakestripe.refunds (payment_intent_id);
-- seq orders the refunds created in the same second, for the list (newest
-- first), as the intents' seq does.
ALTER TABLE fakestripe.refunds
    ADD COLUMN seq      bigserial NOT NULL UNIQUE,
    ADD COLUMN reason   text CHECK (reason IN ('duplicate', 'fraudulent', 'requested_by_customer')),
    ADD COLUMN metadata jsonb     NOT NULL DEFAULT '{}',
    ADD CONSTRAINT refunds_amount_check CHECK (amount > 0);

ALTER TABLE fakestripe.payment_intents ADD COLUMN amount_refunded bigint NOT NULL DEFAULT 0;
UPDATE fakestripe.payment_intents i SET amount_refunded = r.amount
    FROM fakestripe.refunds r WHERE r.payment_intent_id = i.id;
ALTER TABLE fakestripe.payment_intents ADD CONSTRAINT payment_intents_amount_refunded_check
    CHECK (amount_refunded >= 0 AND amount_refunded <= amount);

-- +goose Down
ALTER TABLE fakestripe.payment_intents DROP COLUMN amount_refunded;
ALTER TABLE fakestripe.refunds DROP COLUMN seq, DROP COLUMN reason, DROP COLUMN metadata,
    DROP CONSTRAINT refunds_amount_check;
DROP INDEX fakestripe.refunds_payment_intent_id_idx;
ALTER TABLE fakestripe.refunds ADD CONSTRAINT refunds_payment_intent_id_key UNIQUE (payment_intent_id);
