-- A point select by primary key: the floor of a replay, which reads one key
-- row (ClaimKey finds it and returns its stored response). :cust and :key
-- name a finished key that cmd/loadtest placed before the run.
SELECT status, response_code, response_body FROM idempotency_keys WHERE customer_id = :cust AND key = :key;
