-- +goose Up

-- asked_at joins the contract's view, at its end (a view may only gain
-- columns there): an operator aging a stuck key, and a harness judging the
-- completer, need when a client last asked for it as well as its lease and
-- age. Adding a column keeps version 1: a caller's SELECT of named columns
-- reads the same.
CREATE OR REPLACE VIEW idem_keys_v1 AS
SELECT kind, scope, key, fingerprint, status, operation_id, lock_token, locked_until,
       locked_until - now() AS lease_left, now() - created_at AS age,
       request, response_status, response_headers, response_body,
       created_at, finished_at, settle_attempts, parked_at, asked_at
FROM idem_keys;

-- +goose Down
-- A view cannot lose a column in place.
DROP VIEW idem_keys_v1;
CREATE VIEW idem_keys_v1 AS
SELECT kind, scope, key, fingerprint, status, operation_id, lock_token, locked_until,
       locked_until - now() AS lease_left, now() - created_at AS age,
       request, response_status, response_headers, response_body,
       created_at, finished_at, settle_attempts, parked_at
FROM idem_keys;
