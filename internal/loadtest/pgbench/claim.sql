-- The claim of a new key alone, for its latency as the key table grows
-- (cmd/loadtest -growth). Run with -M prepared, like neworder.sql.
\set k random(1, 1000000000000000)
-- ClaimKey (queries/idempotency_keys.sql), one statement, autocommit
WITH inserted AS (
    INSERT INTO idempotency_keys (customer_id, key, fingerprint, locked_until, lock_token, request, operation_id, provider_key)
    VALUES (:cust, 'grow-' || :k::text, '\x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'::bytea, now() + '30 seconds'::interval, gen_random_uuid(), '{"items":[{"sku":"mug-espresso","quantity":1}],"amount":1200,"currency":"eur"}'::jsonb, gen_random_uuid(), 'gprov-' || :k::text)
    ON CONFLICT (customer_id, key) DO NOTHING
    RETURNING true AS inserted, customer_id, key, fingerprint, status, locked_until,
              (locked_until - now())::interval AS lock_remaining, response_code, response_body, operation_id,
              (now() - created_at)::interval AS age
),
claimed AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT customer_id, key, 'claimed', jsonb_build_object('locked_until', locked_until)
    FROM inserted
)
SELECT inserted, fingerprint, status, lock_remaining, response_code, response_body, operation_id, age
FROM inserted
UNION ALL
SELECT false, k.fingerprint, k.status, (k.locked_until - now())::interval, k.response_code, k.response_body,
       k.operation_id, (now() - k.created_at)::interval
FROM idempotency_keys k
WHERE k.customer_id = :cust AND k.key = 'grow-' || :k::text
  AND NOT EXISTS (SELECT FROM inserted);
