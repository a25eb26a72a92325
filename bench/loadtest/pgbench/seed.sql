-- The seed article's shape of one new order: five round trips of the shop's
-- own (plus the fake Stripe's same two transactions, when :fakedb is 1 as
-- in neworder.sql), each statement committing on its own, for comparison
-- with neworder.sql's three. It writes
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
-- the fake Stripe's create and confirm of the PaymentIntent, each its own
-- transaction, as in neworder.sql
\if :fakedb
BEGIN;
SELECT pg_try_advisory_xact_lock(1717660011, hashtext('sprov-' || :k::text));
SELECT request_hash, status, body FROM fakestripe.idempotency_keys WHERE key = 'sprov-' || :k::text;
INSERT INTO fakestripe.payment_intents (id, amount, currency, description, metadata, status, payment_method)
VALUES ('pi_seed' || :k::text, 1200, 'eur', 'order for customer ' || :cust::text,
        jsonb_build_object('customer_id', :cust::text, 'idempotency_key', 'seed-' || :k::text, 'operation_id', md5(:k::text)),
        'requires_payment_method', NULL)
RETURNING seq, created;
INSERT INTO fakestripe.idempotency_keys (key, request_hash, status, body)
VALUES ('sprov-' || :k::text, '\x0123'::bytea, 200, convert_to(repeat('x', 1400), 'UTF8'));
COMMIT;
\endif
\if :fakedb
BEGIN;
SELECT pg_try_advisory_xact_lock(1717660011, hashtext('sprov-' || :k::text || '/confirm'));
SELECT request_hash, status, body FROM fakestripe.idempotency_keys WHERE key = 'sprov-' || :k::text || '/confirm';
SELECT i.id, i.seq, i.amount, i.currency, i.description, i.metadata, i.status, i.payment_method,
       i.latest_charge, i.last_payment_error, i.canceled_at, i.cancellation_reason, i.created,
       EXISTS (SELECT FROM fakestripe.refunds r WHERE r.payment_intent_id = i.id)
FROM fakestripe.payment_intents i WHERE i.id = 'pi_seed' || :k::text FOR UPDATE;
UPDATE fakestripe.payment_intents
SET status = 'succeeded', payment_method = 'pm_card_visa', latest_charge = 'ch_seed' || :k::text, last_payment_error = NULL,
    canceled_at = NULL, cancellation_reason = NULL
WHERE id = 'pi_seed' || :k::text;
INSERT INTO fakestripe.idempotency_keys (key, request_hash, status, body)
VALUES ('sprov-' || :k::text || '/confirm', '\x0123'::bytea, 200, convert_to(repeat('x', 1400), 'UTF8'));
COMMIT;
\endif
-- 3. insert the order, and its outbox jobs as neworder.sql does (the same
-- work, so that the comparison is of the round trips alone; pgbench's own
-- queue, which no worker takes)
WITH inserted AS (
    INSERT INTO orders (customer_id, id, idempotency_key, amount, currency, charge_id, items)
    VALUES (:cust, gen_random_uuid(), 'seed-' || :k::text, 1200, 'eur', 'pi_seed' || :k::text, '[]'::jsonb)
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
