-- Run with -M prepared (or -M extended behind PgBouncer): pgbench then sends
-- each :variable as a parameter, typed by its context, as pgx does.
-- One new order as the shop issues it to PostgreSQL (POST /api/orders with a
-- fresh key and no cart, the fake Stripe charging), statement for
-- statement: the claim, the fake's create of the PaymentIntent (its own
-- transaction, on the fake's own database since the fake became a process
-- of its own; here on the same one), the fenced store of the intent's id,
-- the fake's confirm (likewise), the finish. (The auth lookup is not among them: the shop remembers a verified
-- bearer token for a minute, so a client's orders after its first do not
-- look it up; :tokenhash is kept for scripts that do.)
-- Variables: :cust (a customer id), :tokenhash (its token hash, hex), and
-- :fakedb, 1 when the fake keeps its state in PostgreSQL
-- (FAKE_PROVIDER_STORE=postgres; its two transactions then run here as on
-- its own database) and 0 with the memory store, the load test's default
-- (they then run nowhere, as at Stripe), set by bench/cmd/loadtest with -D.
-- Keys are random: a collision just replays (and its finish then finds no
-- started key and writes nothing).
--
-- The lock token and the operation id: the shop makes them in-process
-- (uuid.New), and pgbench cannot make a uuid. Rather than fetch two with an
-- extra statement (SELECT gen_random_uuid() AS tok, gen_random_uuid() AS op
-- \gset, a round trip the app does not make), each is drawn here as a
-- random integer and turned into a uuid inside the statements that take it
-- (md5(:tok::text)::uuid): the claim and the finish compute the same token
-- from the same variable, so the finish is fenced by the claim's own token,
-- as in the app, at no round trip.
\set k random(1, 1000000000000000)
\set tok random(1, 9223372036854775806)
\set op random(1, 9223372036854775806)
-- 1. claim: ClaimOrderKey (queries/order_keys.sql), one statement,
-- autocommit; no cart (cart_id and cart_version NULL, as for a POST of
-- items), so the cart CTE updates nothing.
WITH cart AS (
    UPDATE carts SET order_key = ('pgb-' || :k::text)::text, order_key_at = now()
    WHERE carts.id = NULL::uuid AND carts.customer_id = :cust::uuid
      AND carts.version = NULL::bigint
      AND carts.order_id IS NULL AND (carts.order_key IS NULL OR carts.order_key = ('pgb-' || :k::text)::text)
      AND NOT EXISTS (SELECT FROM idem_keys k WHERE k.scope = (:cust::uuid)::text AND k.key = ('pgb-' || :k::text)::text)
    RETURNING carts.id, carts.version
),
claimed AS MATERIALIZED (
    SELECT idem_claim((:cust::uuid)::text, ('pgb-' || :k::text)::text,
                      '\x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'::bytea, '30 seconds'::interval,
                      '{"items":[{"sku":"mug-espresso","quantity":1}],"amount":1200,"currency":"eur"}'::jsonb,
                      md5(:op::text)::uuid, md5(:tok::text)::uuid, 'order'::text) AS inserted,
           cart.id AS cart_id, cart.version AS cart_version
    FROM (SELECT 1) AS one
    LEFT JOIN cart ON true
    WHERE NULL::uuid IS NULL OR cart.id IS NOT NULL
),
-- The stock's reservation (issue 40): the mug keeps no stock here, as in
-- the load test's shop, so these find no row, as the shop's do.
wanted AS (
    SELECT line ->> 'sku' AS sku, sum((line ->> 'quantity')::integer)::integer AS quantity
    FROM claimed, jsonb_array_elements('{"lines":[{"sku":"mug-espresso","quantity":1}]}'::jsonb -> 'lines') AS line
    WHERE claimed.inserted
    GROUP BY line ->> 'sku'
),
locked AS (
    SELECT stock.sku FROM stock JOIN wanted ON wanted.sku = stock.sku
    ORDER BY stock.sku FOR UPDATE OF stock
),
reserved AS (
    UPDATE stock SET on_hand = stock.on_hand - wanted.quantity
    FROM locked, wanted WHERE stock.sku = locked.sku AND wanted.sku = locked.sku
    RETURNING stock.sku, wanted.quantity
),
held AS (
    INSERT INTO stock_reservations (scope, key, sku, quantity)
    SELECT (:cust::uuid)::text, ('pgb-' || :k::text)::text, reserved.sku, reserved.quantity FROM reserved
),
about AS (
    INSERT INTO order_keys (scope, key, provider_key, cart_id, cart_version)
    SELECT (:cust::uuid)::text, ('pgb-' || :k::text)::text, ('prov-' || :k::text)::text, cart_id, cart_version
    FROM claimed WHERE inserted
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT :cust::uuid, ('pgb-' || :k::text)::text, 'claimed', jsonb_build_object('locked_until', now() + '30 seconds'::interval)
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
WHERE k.scope = (:cust::uuid)::text AND k.key = ('pgb-' || :k::text)::text
  AND NOT EXISTS (SELECT FROM claimed WHERE inserted);
-- 2. the fake Stripe's create of the PaymentIntent (internal/fakestripe,
-- createIntent under idempotent), its own transaction: the key's advisory
-- lock, the key's stored answer (none), the intent, the answer stored for
-- the key. The stored answer is the intent's JSON, about 1.4 kB.
\if :fakedb
BEGIN;
SELECT pg_try_advisory_xact_lock(1717660011, hashtext('prov-' || :k::text));
SELECT request_hash, status, body FROM fakestripe.idempotency_keys WHERE key = 'prov-' || :k::text;
INSERT INTO fakestripe.payment_intents (id, amount, currency, description, metadata, status, payment_method)
VALUES ('pi_pgb' || :k::text, 1200, 'eur', 'order for customer ' || :cust::text,
        jsonb_build_object('customer_id', :cust::text, 'idempotency_key', 'pgb-' || :k::text, 'operation_id', md5(:op::text)),
        'requires_payment_method', NULL)
RETURNING seq, created;
INSERT INTO fakestripe.idempotency_keys (key, request_hash, status, body)
VALUES ('prov-' || :k::text, '\x0123'::bytea, 200, convert_to(repeat('x', 1400), 'UTF8'));
COMMIT;
\endif
-- 3. StoreIntent (queries/order_keys.sql): the intent's id into the key's
-- row, fenced by the claim's lock token and its lease, one statement,
-- autocommit
UPDATE order_keys o SET payment_intent_id = ('pi_pgb' || :k::text)::text
FROM idem_keys k
WHERE o.scope = (:cust::uuid)::text AND o.key = ('pgb-' || :k::text)::text
  AND k.scope = o.scope AND k.key = o.key AND k.status = 'started' AND k.lock_token = md5(:tok::text)::uuid
  AND k.locked_until > now()
  AND (o.payment_intent_id IS NULL OR o.payment_intent_id = ('pi_pgb' || :k::text)::text)
RETURNING true AS stored;
-- 4. the fake Stripe's confirm (confirmIntent under idempotent, then
-- charge), its own transaction: the confirm key's lock and stored answer,
-- the intent read and locked, its new state, the answer stored
\if :fakedb
BEGIN;
SELECT pg_try_advisory_xact_lock(1717660011, hashtext('prov-' || :k::text || '/confirm'));
SELECT request_hash, status, body FROM fakestripe.idempotency_keys WHERE key = 'prov-' || :k::text || '/confirm';
SELECT i.id, i.seq, i.amount, i.currency, i.description, i.metadata, i.status, i.payment_method,
       i.latest_charge, i.last_payment_error, i.canceled_at, i.cancellation_reason, i.created,
       EXISTS (SELECT FROM fakestripe.refunds r WHERE r.payment_intent_id = i.id)
FROM fakestripe.payment_intents i WHERE i.id = 'pi_pgb' || :k::text FOR UPDATE;
UPDATE fakestripe.payment_intents
SET status = 'succeeded', payment_method = 'pm_card_visa', latest_charge = 'ch_pgb' || :k::text, last_payment_error = NULL,
    canceled_at = NULL, cancellation_reason = NULL
WHERE id = 'pi_pgb' || :k::text;
INSERT INTO fakestripe.idempotency_keys (key, request_hash, status, body)
VALUES ('prov-' || :k::text || '/confirm', '\x0123'::bytea, 200, convert_to(repeat('x', 1400), 'UTF8'));
COMMIT;
\endif
-- 5. finish: FinishOrder (queries/orders.sql), one statement, autocommit,
-- fenced by the claim's lock token (idem_finish)
WITH finished AS MATERIALIZED (
    SELECT idem_finish((:cust::uuid)::text, ('pgb-' || :k::text)::text, md5(:tok::text)::uuid, 201::integer,
                       NULL::jsonb, '{"order_id":"x","charge_id":"pi_pgb","amount":1200,"currency":"eur","status":"paid","items":[{"sku":"mug-espresso","quantity":1}]}'::bytea) AS ok
),
inserted AS (
    INSERT INTO orders (customer_id, id, idempotency_key, amount, currency, charge_id, items)
    SELECT :cust::uuid, gen_random_uuid(), ('pgb-' || :k::text)::text, 1200, 'eur', 'pi_pgb' || :k::text,
           '[{"sku":"mug-espresso","quantity":1}]'::jsonb
    FROM finished WHERE ok
    RETURNING customer_id, id
),
-- the outbox: one River job per consumer of "order placed" (internal/outbox),
-- in a queue of pgbench's own that no worker takes: the rows cost what the
-- shop's do, and the shop's workers do not run them during a baseline
enqueued AS (
    INSERT INTO river_job (kind, args, queue, priority, max_attempts, state, scheduled_at, tags, metadata)
    SELECT consumer.kind, jsonb_build_object('customer_id', inserted.customer_id, 'order_id', inserted.id),
           'pgbench', 1, 25, 'available'::river_job_state, now(), '{order_placed}'::varchar(255)[], '{}'::jsonb
    FROM inserted CROSS JOIN unnest('{loyalty_points,order_confirmation_mail}'::text[]) AS consumer(kind)
),
logged AS (
    INSERT INTO key_events (customer_id, key, event, detail)
    SELECT :cust::uuid, ('pgb-' || :k::text)::text, 'finished'::text,
           '{}'::jsonb || jsonb_build_object('status', 201::integer, 'order_id', inserted.id)
    FROM inserted
),
closed AS (
    UPDATE carts SET order_id = inserted.id
    FROM inserted, order_keys o
    WHERE o.scope = (:cust::uuid)::text AND o.key = ('pgb-' || :k::text)::text
      AND carts.id = o.cart_id AND carts.customer_id = :cust::uuid AND carts.version = o.cart_version
      AND carts.order_id IS NULL
),
sold AS (
    UPDATE stock_reservations r SET state = 'sold', ended_at = now()
    FROM inserted
    WHERE r.scope = (:cust::uuid)::text AND r.key = ('pgb-' || :k::text)::text AND r.state = 'reserved'
)
SELECT inserted.id FROM inserted;
