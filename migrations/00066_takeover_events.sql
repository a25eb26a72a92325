-- +goose Up

-- A takeover of an order key is written to the key's audit trail by the
-- takeover's own statement: the kit's UPDATE of the lock token fires this
-- trigger, so the event commits with the takeover or not at all, and costs
-- no round trip of its own (the engine used to append it afterwards, and a
-- crash in between lost it). The kit counts a completer's takeovers in
-- settle_attempts and a retry's not at all, which is how the event tells
-- who took the key. Renewals, releases and finishes leave the token alone
-- and never fire it.
-- +goose StatementBegin
CREATE FUNCTION record_order_takeover() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO key_events (customer_id, key, event, detail)
    VALUES (NEW.scope::uuid, NEW.key, 'taken_over',
            CASE WHEN NEW.settle_attempts > OLD.settle_attempts
                 THEN jsonb_build_object('by', 'completer', 'attempt', NEW.settle_attempts,
                                         'locked_until', NEW.locked_until)
                 ELSE jsonb_build_object('by', 'request', 'locked_until', NEW.locked_until)
            END);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER order_key_taken_over
AFTER UPDATE OF lock_token ON idem_keys
FOR EACH ROW
WHEN (NEW.kind = 'order' AND OLD.status = 'started' AND NEW.status = 'started'
      AND NEW.lock_token IS DISTINCT FROM OLD.lock_token)
EXECUTE FUNCTION record_order_takeover();

-- +goose Down
DROP TRIGGER order_key_taken_over ON idem_keys;
DROP FUNCTION record_order_takeover();
