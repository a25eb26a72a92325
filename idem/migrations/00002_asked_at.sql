-- +goose Up

-- When a client last asked about a started key without being handed it: a
-- claim told the key was in progress, or one that found the database away
-- (the kit writes those when it answers again). The completer leaves a key
-- to its client for its grace after this, not after the key's creation, so
-- that a client retrying through a long outage or a long-held lease gets
-- its own outcome instead of the completer's "not completed". NULL: never
-- since the claim (created_at). A column without a default is added
-- without rewriting the table.
ALTER TABLE idem_keys ADD COLUMN asked_at timestamptz;

-- +goose Down
ALTER TABLE idem_keys DROP COLUMN asked_at;
