-- name: FinishedKey :one
-- A key's stored answer, read without a lock: an attempt whose order can no
-- longer be priced (the product left the catalog, the catalog cannot load)
-- is still answered from it when the key is finished, since a finished key
-- never changes.
SELECT fingerprint, status, response_code, response_body
FROM idempotency_keys
WHERE customer_id = @customer_id AND key = @key;
