-- The claim of a new key into the partitioned stand-in of idem_keys that
-- bench/cmd/loadtest -sweep-by partition builds (idem_keys_part, order_keys_part,
-- PARTITION BY RANGE (created_at); not the shop's schema), for what a claim
-- would cost if the key table were partitioned. The primary key includes
-- created_at, so ON CONFLICT no longer stops a second row of one
-- (scope, key): idem_claim_part takes a transaction-scoped advisory lock on
-- the key's hash, then looks the key up in every retained partition, and
-- inserts only if it is not there. Otherwise claim.sql's statement, run the
-- same way (-M prepared, autocommit).
\set k random(1, 1000000000000000)
\set tok random(1, 9223372036854775806)
\set op random(1, 9223372036854775806)
-- ClaimOrderKey (queries/order_keys.sql) on the stand-ins, one statement, autocommit; no cart
WITH cart AS (
    UPDATE carts SET order_key = ('grow-' || :k::text)::text, order_key_at = now()
    WHERE carts.id = NULL::uuid AND carts.customer_id = :cust::uuid
      AND carts.version = NULL::bigint
      AND carts.order_id IS NULL AND (carts.order_key IS NULL OR carts.order_key = ('grow-' || :k::text)::text)
      AND NOT EXISTS (SELECT FROM idem_keys_part k WHERE k.scope = (:cust::uuid)::text AND k.key = ('grow-' || :k::text)::text)
    RETURNING carts.id, carts.version
),
claimed AS MATERIALIZED (
    SELECT idem_claim_part((:cust::uuid)::text, ('grow-' || :k::text)::text,
                      '\x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'::bytea, '30 seconds'::interval,
                      '{"items":[{"sku":"mug-espresso","quantity":1}],"amount":1200,"currency":"eur"}'::jsonb,
                      md5(:op::text)::uuid, md5(:tok::text)::uuid, 'order'::text) AS inserted,
           cart.id AS cart_id, cart.version AS cart_version
    FROM (SELECT 1) AS one
    LEFT JOIN cart ON true
    WHERE NULL::uuid IS NULL OR cart.id IS NOT NULL
),
about AS (
    INSERT INTO order_keys_part (scope, key, created_at, provider_key, cart_id, cart_version)
    SELECT (:cust::uuid)::text, ('grow-' || :k::text)::text, now(), ('gprov-' || :k::text)::text, cart_id, cart_version
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
FROM idem_keys_part AS k
WHERE k.scope = (:cust::uuid)::text AND k.key = ('grow-' || :k::text)::text
  AND NOT EXISTS (SELECT FROM claimed WHERE inserted);
