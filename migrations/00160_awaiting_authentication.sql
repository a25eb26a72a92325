-- +goose Up
-- 3-D Secure: an operation whose confirm the bank asked to authenticate
-- waits, its key started, for the shopper's trip to their bank and back.
-- authenticate_url is where the shopper authenticates (the intent's
-- next_action.redirect_to_url), awaiting_authentication_at when the wait
-- began (the completer cancels an intent still waiting past the
-- authentication window). Both are written fenced by the attempt's lock
-- token (AwaitAuthentication), as the intent's id is.
ALTER TABLE order_keys ADD COLUMN authenticate_url text, ADD COLUMN awaiting_authentication_at timestamptz;

-- +goose Down
ALTER TABLE order_keys DROP COLUMN authenticate_url, DROP COLUMN awaiting_authentication_at;
