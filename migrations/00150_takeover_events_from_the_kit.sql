-- +goose Up

-- A takeover of an order key is recorded by the order engine, in the
-- takeover's own transaction, through the kit's TookOver hook
-- (checkout.recordTakeover, queries/order_keys.sql RecordTakeover): the
-- event still commits with the takeover or not at all, with the same
-- detail, and the shop no longer keeps a trigger on the kit's table, which
-- is not part of the kit's SQL contract (idem/README.md). The trigger of
-- migration 00066 goes.
DROP TRIGGER order_key_taken_over ON idem_keys;
DROP FUNCTION record_order_takeover();

-- +goose Down
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
