-- The seed article's shape of one new order: five round trips of the shop's
-- own (plus the provider's same charge transaction), each statement
-- committing on its own, for comparison with neworder.sql's two. It writes
-- the rows the shop writes, in the shop's tables (the kit's idem_keys, the
-- shop's order_keys, orders, key_events), but naively: plain statements,
-- no SQL functions, no lock-token fence.
\set k random(1, 1000000000000000)
-- 1. look the key up
SELECT status, response_status, response_body FROM idem_keys WHERE scope = (:cust::uuid)::text AND key = 'seed-' || :k::text;
-- 2. insert it as started (with the shop's side row, in the same statement)
WITH inserted AS (
    INSERT INTO idem_keys (kind, scope, key, fingerprint, operation_id, lock_token, locked_until, request)
    VALUES ('order', (:cust::uuid)::text, 'seed-' || :k::text, '\x01'::bytea, gen_random_uuid(), gen_random_uuid(),
            now() + '30 seconds'::interval, '{}'::jsonb)
    ON CONFLICT (scope, key) DO NOTHING
    RETURNING scope, key
)
INSERT INTO order_keys (scope, key, provider_key)
SELECT scope, key, 'sprov-' || :k::text FROM inserted;
-- the provider's charge, as in neworder.sql
BEGIN;
SELECT pg_advisory_xact_lock(1886351984, hashtext('sprov-' || :k::text));
SELECT EXISTS (SELECT FROM provider.canceled_keys WHERE idempotency_key = 'sprov-' || :k::text);
INSERT INTO provider.charges (id, idempotency_key, params_hash, amount, currency, card_last4, description, status)
VALUES ('ch_seed' || :k::text, 'sprov-' || :k::text, '\x0123'::bytea, 1200, 'eur', '4242', 'order', 'succeeded')
ON CONFLICT (idempotency_key) DO NOTHING;
COMMIT;
-- 3. insert the order, and its outbox jobs as neworder.sql does (the same
-- work, so that the comparison is of the round trips alone; pgbench's own
-- queue, which no worker takes)
WITH inserted AS (
    INSERT INTO orders (customer_id, id, idempotency_key, amount, currency, charge_id, items)
    VALUES (:cust, gen_random_uuid(), 'seed-' || :k::text, 1200, 'eur', 'ch_seed' || :k::text, '[]'::jsonb)
    RETURNING customer_id, id
)
INSERT INTO river_job (kind, args, queue, priority, max_attempts, state, scheduled_at, tags, metadata)
SELECT consumer.kind, jsonb_build_object('customer_id', inserted.customer_id, 'order_id', inserted.id),
       'pgbench', 1, 25, 'available'::river_job_state, now(), '{order_placed}'::varchar(255)[], '{}'::jsonb
FROM inserted CROSS JOIN unnest('{loyalty_points,order_confirmation_mail}'::text[]) AS consumer(kind);
-- 4. mark the key finished (the columns idem_finish sets)
UPDATE idem_keys SET status = 'finished', response_status = 201, response_body = '{}'::bytea, finished_at = now()
WHERE scope = (:cust::uuid)::text AND key = 'seed-' || :k::text;
-- 5. record the event
INSERT INTO key_events (customer_id, key, event, detail) VALUES (:cust, 'seed-' || :k::text, 'finished', '{}'::jsonb);
