-- +goose Up

-- The kit's SQL contract, version 1 (README.md, "SQL contract"): what a
-- caller's own SQL may name. A caller whose write must land in the same
-- statement as a claim or a finish calls idem_claim and idem_finish
-- (migration 00001), and reads a key through this view, never through
-- idem_keys: the table's columns may change in any release, the view's only
-- with the contract's version (a v2 view would be added beside this one).
-- A plain view over one table is inlined by the planner: a join on it, or
-- an UPDATE ... FROM it, plans as one on the table would.
--
-- lease_left and age are judged by the database clock, as the kit judges
-- them; a key is held while it is started and its lease_left is above zero.
CREATE VIEW idem_keys_v1 AS
SELECT kind, scope, key, fingerprint, status, operation_id, lock_token, locked_until,
       locked_until - now() AS lease_left, now() - created_at AS age,
       request, response_status, response_headers, response_body,
       created_at, finished_at, settle_attempts, parked_at
FROM idem_keys;

-- +goose Down
DROP VIEW idem_keys_v1;
