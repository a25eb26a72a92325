-- +goose Up

-- A browser shopper who signed out: the session cookie naming it no longer
-- names anyone, even a copy of it kept elsewhere. The browser becomes a new
-- anonymous shopper on its next change of the cart.
ALTER TABLE customers ADD COLUMN signed_out_at timestamptz;

-- +goose Down
ALTER TABLE customers DROP COLUMN signed_out_at;
