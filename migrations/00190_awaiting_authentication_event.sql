-- +goose Up

-- The "awaiting_authentication" event (checkout.awaitAuthentication: the
-- bank asked the card holder to authenticate, 3-D Secure, issue 36) was
-- refused by this CHECK from the start: every such event failed, was
-- logged as a warning, and never reached the key's trail. Found by the
-- skewed-clock chaos runs' logs (6 December 2026).
ALTER TABLE key_events DROP CONSTRAINT key_events_event_check;
ALTER TABLE key_events ADD CONSTRAINT key_events_event_check
    CHECK (event IN ('claimed', 'taken_over', 'finished', 'recovered', 'expired', 'refunded', 'parked',
                     'awaiting_authentication'));

-- +goose Down
DELETE FROM key_events WHERE event = 'awaiting_authentication';
ALTER TABLE key_events DROP CONSTRAINT key_events_event_check;
ALTER TABLE key_events ADD CONSTRAINT key_events_event_check
    CHECK (event IN ('claimed', 'taken_over', 'finished', 'recovered', 'expired', 'refunded', 'parked'));
