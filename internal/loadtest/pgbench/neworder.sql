-- Run with -M prepared (or -M extended behind PgBouncer): pgbench then sends
-- each :variable as a parameter, typed by its context, as pgx does.
-- One new order as the shop issues it to PostgreSQL (POST /api/orders with a
-- fresh key, the in-process demo provider charging), statement for statement.
-- Variables: :cust (a customer id), :tokenhash (its token hash, hex),
-- set by cmd/loadtest with -D. Keys are random: a collision just replays.
\set k random(1, 1000000000000000)
-- requireCustomer: CustomerByTokenHash (queries/customers.sql)
SELECT id, name FROM customers WHERE token_hash = decode(:tokenhash, 'hex');
-- 1. claim: ClaimKey (queries/idempotency_keys.sql), one statement, autocommit
WITH inserted AS (
    INSERT INTO idempotency_keys (customer_id, key, fingerprint, locked_until, lock_token, request, operation_id, provider_key)
    VALUES (:cust, 'pgb-' || :k::text, '\x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'::bytea, now() + '30 seconds'::interval, gen_random_uuid(), '{"items":[{"sku":"mug-espresso","quantity":1}],"amount":1200,"currency":"eur"}'::jsonb, gen_random_uuid(), 'prov-' || :k::text)
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
WHERE k.customer_id = :cust AND k.key = 'pgb-' || :k::text
  AND NOT EXISTS (SELECT FROM inserted);
-- 2. the provider's charge (internal/fakeprovider/create.go record), its own transaction
BEGIN;
-- ProviderLockKey (queries/provider.sql)
SELECT pg_advisory_xact_lock(1886351984, hashtext('prov-' || :k::text));
-- ProviderKeyCanceled
SELECT EXISTS (SELECT FROM provider.canceled_keys WHERE idempotency_key = 'prov-' || :k::text);
-- ProviderCreateCharge
INSERT INTO provider.charges (id, idempotency_key, params_hash, amount, currency, card_last4, description, status)
VALUES ('ch_pgb' || :k::text, 'prov-' || :k::text, '\x0123'::bytea, 1200, 'eur', '4242', 'order', 'succeeded')
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING id, idempotency_key, params_hash, amount, currency, card_last4, description, status, created_at;
COMMIT;
-- 3. finish: FinishOrder (queries/orders.sql); the lock token check is
-- replaced by the key alone, as pgbench cannot carry the claim's token over
WITH finished AS (
    UPDATE idempotency_keys
    SET status = 'finished', response_code = 201, response_body = '{"id":"x","status":"paid","amount":1200,"currency":"eur"}'::jsonb
    WHERE idempotency_keys.customer_id = :cust AND idempotency_keys.key = 'pgb-' || :k::text
      AND status = 'started'
    RETURNING idempotency_keys.customer_id, idempotency_keys.key, idempotency_keys.response_code,
              idempotency_keys.response_body, idempotency_keys.cart_id, idempotency_keys.cart_version
),
inserted AS (
    INSERT INTO orders (customer_id, id, idempotency_key, amount, currency, charge_id, items)
    SELECT customer_id, gen_random_uuid(), key, 1200, 'eur', 'ch_pgb' || :k::text, '[{"sku":"mug-espresso","quantity":1}]'::jsonb
    FROM finished
    RETURNING id
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT finished.customer_id, finished.key, 'finished',
           '{}'::jsonb || jsonb_build_object('status', finished.response_code, 'order_id', inserted.id)
    FROM finished, inserted
),
closed AS (
    UPDATE carts SET order_id = inserted.id
    FROM finished, inserted
    WHERE carts.id = finished.cart_id AND carts.version = finished.cart_version AND carts.order_id IS NULL
)
SELECT finished.response_body FROM finished, inserted;
