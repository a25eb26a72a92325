-- The seed article's shape of one new order: five round trips of the shop's
-- own (plus the provider's same charge transaction), each statement
-- committing on its own, for comparison with neworder.sql's two.
\set k random(1, 1000000000000000)
-- 1. look the key up
SELECT status, response_code, response_body FROM idempotency_keys WHERE customer_id = :cust AND key = 'seed-' || :k::text;
-- 2. insert it as started
INSERT INTO idempotency_keys (customer_id, key, fingerprint, locked_until, lock_token, request, operation_id, provider_key)
VALUES (:cust, 'seed-' || :k::text, '\x01'::bytea, now() + '30 seconds'::interval, gen_random_uuid(), '{}'::jsonb, gen_random_uuid(), 'sprov-' || :k::text)
ON CONFLICT (customer_id, key) DO NOTHING;
-- the provider's charge, as in neworder.sql
BEGIN;
SELECT pg_advisory_xact_lock(1886351984, hashtext('sprov-' || :k::text));
SELECT EXISTS (SELECT FROM provider.canceled_keys WHERE idempotency_key = 'sprov-' || :k::text);
INSERT INTO provider.charges (id, idempotency_key, params_hash, amount, currency, card_last4, description, status)
VALUES ('ch_seed' || :k::text, 'sprov-' || :k::text, '\x0123'::bytea, 1200, 'eur', '4242', 'order', 'succeeded')
ON CONFLICT (idempotency_key) DO NOTHING;
COMMIT;
-- 3. insert the order
INSERT INTO orders (customer_id, id, idempotency_key, amount, currency, charge_id, items)
VALUES (:cust, gen_random_uuid(), 'seed-' || :k::text, 1200, 'eur', 'ch_seed' || :k::text, '[]'::jsonb);
-- 4. mark the key finished
UPDATE idempotency_keys SET status = 'finished', response_code = 201, response_body = '{}'::jsonb
WHERE customer_id = :cust AND key = 'seed-' || :k::text;
-- 5. record the event
INSERT INTO key_events (customer_id, key, event, detail) VALUES (:cust, 'seed-' || :k::text, 'finished', '{}'::jsonb);
