-- +goose Up
-- 3-D Secure through a redirect, as Stripe does it for a confirm that
-- passes return_url: the intent keeps where the shopper authenticates (the
-- fake's own page, authenticate_url) and where the page sends them back
-- (return_url); without return_url a requires_action intent shows
-- use_stripe_sdk, as before.
ALTER TABLE fakestripe.payment_intents ADD COLUMN return_url text, ADD COLUMN authenticate_url text;

-- +goose Down
ALTER TABLE fakestripe.payment_intents DROP COLUMN return_url, DROP COLUMN authenticate_url;
