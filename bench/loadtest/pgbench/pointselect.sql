-- A point select by primary key: the floor of a replay, which reads one key
-- row (ClaimOrderKey, queries/order_keys.sql, finds it in idem_keys and
-- returns its stored response). :cust and :key name a finished key that
-- bench/cmd/loadtest placed before the run; the key's scope is its customer's id.
SELECT status, response_status, response_body FROM idem_keys WHERE scope = (:cust::uuid)::text AND key = :key;
