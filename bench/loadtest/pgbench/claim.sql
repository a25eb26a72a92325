-- The claim of a new key alone, for its latency as the key table grows
-- (bench/cmd/loadtest -growth). Run with -M prepared, like neworder.sql; the lock
-- token and the operation id are drawn as in neworder.sql (a random integer
-- made a uuid in the statement, no extra round trip).
\set k random(1, 1000000000000000)
\set tok random(1, 9223372036854775806)
\set op random(1, 9223372036854775806)
-- ClaimOrderKey (queries/order_keys.sql), one statement, autocommit; no cart
WITH cart AS (
    UPDATE carts SET order_key = ('grow-' || :k::text)::text, order_key_at = now()
    WHERE carts.id = NULL::uuid AND carts.customer_id = :cust::uuid
      AND carts.version = NULL::bigint
      AND carts.order_id IS NULL AND (carts.order_key IS NULL OR carts.order_key = ('grow-' || :k::text)::text)
      AND NOT EXISTS (SELECT FROM idem_keys k WHERE k.scope = (:cust::uuid)::text AND k.key = ('grow-' || :k::text)::text)
    RETURNING carts.id, carts.version
),
claimed AS MATERIALIZED (
    SELECT idem_claim((:cust::uuid)::text, ('grow-' || :k::text)::text,
                      '\x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'::bytea, '30 seconds'::interval,
                      '{"items":[{"sku":"mug-espresso","quantity":1}],"amount":1200,"currency":"eur"}'::jsonb,
                      md5(:op::text)::uuid, md5(:tok::text)::uuid, 'order'::text) AS inserted,
           cart.id AS cart_id, cart.version AS cart_version
    FROM (SELECT 1) AS one
    LEFT JOIN cart ON true
    WHERE NULL::uuid IS NULL OR cart.id IS NOT NULL
),
about AS (
    INSERT INTO order_keys (scope, key, provider_key, cart_id, cart_version)
    SELECT (:cust::uuid)::text, ('grow-' || :k::text)::text, ('gprov-' || :k::text)::text, cart_id, cart_version
    FROM claimed WHERE inserted
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT :cust::uuid, ('grow-' || :k::text)::text, 'claimed', jsonb_build_object('locked_until', now() + '30 seconds'::interval)
    FROM claimed WHERE inserted
)
SELECT true AS inserted, '\x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'::bytea AS fingerprint,
       'started'::text AS status, NULL::integer AS response_status, NULL::bytea AS response_body,
       0::double precision AS lease_left_seconds, 0::double precision AS age_seconds
FROM claimed WHERE inserted
UNION ALL
SELECT false, k.fingerprint, k.status, k.response_status, k.response_body,
       extract(epoch FROM k.locked_until - now())::double precision,
       extract(epoch FROM now() - k.created_at)::double precision
FROM idem_keys AS k
WHERE k.scope = (:cust::uuid)::text AND k.key = ('grow-' || :k::text)::text
  AND NOT EXISTS (SELECT FROM claimed WHERE inserted);
