-- +goose Up
-- A confirm may leave a PaymentIntent requires_action (3-D Secure, which
-- the shop cannot take its shopper through) or processing (the fake's
-- pm_card_processing, or the processing rate), as Stripe's may.
-- processing_until is when a processing intent moves on by itself (Unix
-- milliseconds), or NULL when it stays processing until moved on
-- (Provider.MoveOn).
ALTER TABLE fakestripe.payment_intents DROP CONSTRAINT payment_intents_status_check;
ALTER TABLE fakestripe.payment_intents ADD CONSTRAINT payment_intents_status_check
    CHECK (status IN ('requires_payment_method', 'requires_confirmation', 'requires_action', 'processing',
                      'succeeded', 'canceled'));
ALTER TABLE fakestripe.payment_intents ADD COLUMN processing_until bigint;

-- +goose Down
ALTER TABLE fakestripe.payment_intents DROP COLUMN processing_until;
ALTER TABLE fakestripe.payment_intents DROP CONSTRAINT payment_intents_status_check;
ALTER TABLE fakestripe.payment_intents ADD CONSTRAINT payment_intents_status_check
    CHECK (status IN ('requires_payment_method', 'requires_confirmation', 'succeeded', 'canceled'));
