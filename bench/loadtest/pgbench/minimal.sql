-- The minimal pattern of an exactly-once order, the fixed yardstick of the
-- shop's new orders (issue 25): what PostgreSQL does for the same work with
-- nothing else around it. Three autocommits, as the shop's order is at
-- least three commits (its claim and its finish, and the provider's
-- charge): the key claimed with a lock token, the provider's charge row
-- under the operation's key, and the fenced finish with the order written
-- in the same statement. Its tables are MinimalSchema's (minimal_*), of
-- the columns the pattern needs and no more: no audit event, no cart, no
-- outbox job, no trigger. The shop's own statements are neworder.sql's;
-- this denominator does not grow when the shop's SQL does.
-- Variables: :cust, set by bench/cmd/loadtest with -D. Keys are random: a
-- collision makes the claim fail, a counted error.
\set k random(1, 1000000000000000)
\set tok random(1, 9223372036854775806)
-- 1. claim: the key, started, with this attempt's lock token
INSERT INTO minimal_keys (scope, key, lock_token, locked_until)
VALUES (:cust::text, 'min-' || :k::text, :tok::bigint, now() + interval '30 seconds');
-- 2. the provider's charge, under the operation's key
INSERT INTO minimal_charges (idempotency_key, amount, currency)
VALUES ('prov-' || :k::text, 1200, 'eur');
-- 3. the fenced finish and the order, in one statement
WITH finished AS (
    UPDATE minimal_keys SET status = 'finished', response_status = 201,
           response_body = '{"order_id":"min","amount":1200,"currency":"eur"}'
    WHERE scope = :cust::text AND key = 'min-' || :k::text AND status = 'started' AND lock_token = :tok::bigint
    RETURNING scope, key
)
INSERT INTO minimal_orders (scope, key, charge_key, amount, currency)
SELECT scope, key, 'prov-' || :k::text, 1200, 'eur' FROM finished;
