-- The chaos harness's checks (bench/chaos), run after a run has settled,
-- on a database of the harness's own. Each returns the rows that break one
-- invariant, so an empty result is a pass.

-- name: ChaosKeysWithManyOrders :many
-- No key may have made two orders.
SELECT customer_id, idempotency_key, count(*) AS orders
FROM orders
GROUP BY customer_id, idempotency_key
HAVING count(*) > 1;

-- name: ChaosChargesInManyOrders :many
-- No charge may pay for two orders.
SELECT charge_id, count(*) AS orders
FROM orders
GROUP BY charge_id
HAVING count(*) > 1;

-- name: ChaosOrderCharges :many
-- Every order with the charge that pays for it, to hold against the
-- provider's ledger.
SELECT customer_id, id, idempotency_key, charge_id, amount, currency FROM orders;

-- name: ChaosLostKeyRefunds :many
-- Charges the reconciler refunded because no key row claimed them: their
-- key was lost (a failover to a standby that had not received it), and the
-- client's retry ran as a new operation and was charged again.
SELECT charge_id, amount FROM reconciled_refunds WHERE lost_operation ORDER BY charge_id;

-- name: ChaosStartedKeys :one
-- Keys nobody has settled yet, orders' and refunds' (issue 40); a settled
-- run has none.
SELECT count(*) FROM idem_keys_v1 k
WHERE k.status = 'started'
  AND (k.kind = 'refund' OR EXISTS (SELECT FROM order_keys o WHERE o.scope = k.scope AND o.key = k.key));

-- name: ChaosKeys :many
-- Every key with what it stored, to compare with what the clients were told.
SELECT k.scope::uuid AS customer_id, k.key, k.status, k.response_status
FROM idem_keys_v1 k JOIN order_keys USING (scope, key);

-- name: ChaosStoredAnswers :many
-- Every order key with the answer it replays, byte for byte: the history
-- checker's last read of each key (bench/chaos/history).
SELECT k.scope::uuid AS customer_id, k.key, k.status,
       coalesce(k.response_status, 0)::integer AS response_status, k.response_body
FROM idem_keys_v1 k JOIN order_keys USING (scope, key);

-- name: ChaosOrders :many
-- Every order by its key, to compare with the 201s the clients saw.
SELECT customer_id, idempotency_key, id FROM orders;

-- name: ChaosTotals :one
SELECT
    (SELECT count(*) FROM orders)                                         AS orders,
    (SELECT count(*) FROM order_keys)                                     AS keys,
    (SELECT count(*) FROM idem_keys_v1 k JOIN order_keys USING (scope, key)
     WHERE k.response_status = 402)                                       AS keys_402,
    (SELECT count(*) FROM idem_keys_v1 k JOIN order_keys USING (scope, key)
     WHERE k.parked_at IS NOT NULL)                                       AS parked_keys;

-- name: ChaosOrdersWithoutPoints :many
-- Every order must have exactly one loyalty ledger row, of its points. The
-- primary key allows no second row; this finds a missing or wrong one.
SELECT o.customer_id, o.id, o.amount
FROM orders o
LEFT JOIN loyalty_ledger l ON l.customer_id = o.customer_id AND l.order_id = o.id
WHERE l.order_id IS NULL OR l.points <> o.amount / 100;

-- name: ChaosOrdersWithoutMail :many
-- Every order must have exactly one sent-mail record (the primary key
-- allows no second); this finds a missing one.
SELECT o.customer_id, o.id
FROM orders o
WHERE NOT EXISTS (SELECT FROM sent_mails m WHERE m.customer_id = o.customer_id AND m.order_id = o.id);

-- name: ChaosJobsLeft :one
-- Outbox jobs not finished yet; a settled run has none.
SELECT count(*) FROM river_job WHERE state NOT IN ('completed', 'cancelled', 'discarded');

-- name: ChaosJobsLeftDetail :many
-- The unfinished jobs with what River knows of them, so that a failed run
-- says why they were left: when each is due, its attempts and last error.
SELECT id, kind, state::text AS state, attempt,
       extract(epoch FROM scheduled_at - now())::float8 AS due_in_seconds,
       coalesce(errors[array_length(errors, 1)] ->> 'error', '')::text AS last_error,
       coalesce(attempted_by[array_length(attempted_by, 1)], '')::text AS last_attempted_by
FROM river_job
WHERE state NOT IN ('completed', 'cancelled', 'discarded')
ORDER BY id
LIMIT 10;

-- name: ChaosJobTotals :one
-- How the outbox fared: jobs in all, and those worked more than once (a
-- rescue or a retry).
SELECT count(*) AS jobs, count(*) FILTER (WHERE attempt > 1) AS retried
FROM river_job;

-- name: ChaosSlowestJob :one
-- The job that took longest from its order to its end (or to now), with
-- its errors, to say what slowed it.
SELECT id, kind, attempt,
       extract(epoch FROM coalesce(finalized_at, now()) - created_at)::float8 AS seconds,
       coalesce((SELECT string_agg(format('+%ss %s', round(extract(epoch FROM (e ->> 'at')::timestamptz - j.created_at)::numeric, 1), e ->> 'error'), '; ')
                 FROM unnest(j.errors) AS e), '')::text AS errors
FROM river_job j
ORDER BY coalesce(finalized_at, now()) - created_at DESC
LIMIT 1;

-- name: ChaosJobsDiscarded :one
-- Outbox jobs River gave up on: their effect never happened.
SELECT count(*) FROM river_job WHERE state IN ('cancelled', 'discarded');

-- name: ChaosLockNewestKeys :many
-- Locks the newest order keys, started ones first (the checkouts in flight),
-- as a session that stalled holding them would: every finish, lease renewal
-- and takeover of those keys waits for the lock. It skips rows locked
-- already, by a shop's statement of the moment or by another row lock
-- disruption, so that it never waits itself.
SELECT k.scope, k.key, k.status
FROM idem_keys_v1 k JOIN order_keys USING (scope, key)
ORDER BY k.status = 'started' DESC, k.created_at DESC
LIMIT sqlc.arg(n)
FOR UPDATE OF k SKIP LOCKED;

-- name: ChaosWebhookEffects :many
-- What the shops' webhook inbox made of the provider's events, by effect.
-- A delivery of an event handled before is answered and not stored, so
-- duplicates do not show here.
SELECT effect, count(*) AS events FROM stripe_events GROUP BY effect ORDER BY effect;

-- name: ChaosKeyTrail :many
-- One key's row and audit trail, in seconds since the run began, for the
-- example of a violation about it: when it was made, asked about, taken
-- over and finished, by whom.
SELECT 'row' AS event, extract(epoch FROM k.created_at - @began::timestamptz)::double precision AS at,
       jsonb_strip_nulls(jsonb_build_object(
           'status', k.status, 'response_status', k.response_status,
           'asked_at', extract(epoch FROM k.asked_at - @began::timestamptz),
           'locked_until', extract(epoch FROM k.locked_until - @began::timestamptz),
           'finished_at', extract(epoch FROM k.finished_at - @began::timestamptz))) AS detail
FROM idem_keys_v1 k JOIN order_keys USING (scope, key)
WHERE k.scope = (@customer_id::uuid)::text AND k.key = @key::text
UNION ALL
SELECT e.event, extract(epoch FROM e.at - @began::timestamptz)::double precision, e.detail - 'traceparent'
FROM key_events e
WHERE e.customer_id = @customer_id::uuid AND e.key = @key::text
ORDER BY at;

-- name: ChaosCompleterTookAt :one
-- When the completer last took a key over, in seconds since the epoch (0:
-- never): the moment it judged the key's grace.
SELECT coalesce(extract(epoch FROM max(at)), 0)::float8 AS took_at
FROM key_events
WHERE customer_id = @customer_id::uuid AND key = @key::text AND event = 'taken_over' AND detail->>'by' = 'completer';

-- name: ChaosOrderCount :one
-- How many orders the shops have placed: the async failover waits for it
-- to grow, so that writes are flowing when its tail is cut.
SELECT count(*) FROM orders;

-- The refunds' invariants (issue 40, bench/chaos/refund_check.go).

-- name: ChaosOrderRefunds :many
-- Every order with what its refunds did: what they refunded, what they
-- hold (pending ones too), whether it is cancelled, its award and the
-- points its reversals took back.
SELECT o.customer_id, o.id, o.amount, o.charge_id, (o.cancelled_at IS NOT NULL)::boolean AS cancelled,
       coalesce((SELECT sum(r.amount) FROM order_refunds r
                 WHERE r.customer_id = o.customer_id AND r.order_id = o.id AND r.state = 'refunded'), 0)::bigint AS refunded,
       coalesce((SELECT sum(r.amount) FROM order_refunds r
                 WHERE r.customer_id = o.customer_id AND r.order_id = o.id AND r.state <> 'failed'), 0)::bigint AS held,
       (SELECT count(*) FROM order_refunds r
        WHERE r.customer_id = o.customer_id AND r.order_id = o.id AND r.kind = 'cancel' AND r.state = 'refunded') AS cancels,
       coalesce((SELECT sum(l.points) FROM loyalty_ledger l WHERE l.customer_id = o.customer_id AND l.order_id = o.id), 0)::bigint AS awarded,
       coalesce((SELECT sum(v.points) FROM loyalty_reversals v WHERE v.customer_id = o.customer_id AND v.order_id = o.id), 0)::bigint AS reversed
FROM orders o
ORDER BY o.customer_id, o.id;

-- name: ChaosRefunds :many
-- Every refund the shop recorded, with whether its reversal and its mail
-- are recorded.
SELECT r.scope, r.key, r.id, r.customer_id, r.order_id, r.kind, r.amount, r.state,
       coalesce(r.provider_refund_id, '')::text AS provider_refund_id,
       EXISTS (SELECT FROM loyalty_reversals v WHERE v.refund_id = r.id) AS reversed,
       EXISTS (SELECT FROM sent_refund_mails m WHERE m.refund_id = r.id) AS mailed
FROM order_refunds r
ORDER BY r.created_at, r.id;

-- name: ChaosStock :many
-- Every product that keeps stock: what came in, what is on hand, and what
-- its reservations hold in each state.
SELECT s.sku, s.on_hand, s.received,
       coalesce(sum(r.quantity) FILTER (WHERE r.state = 'reserved'), 0)::integer AS reserved,
       coalesce(sum(r.quantity) FILTER (WHERE r.state = 'sold'), 0)::integer AS sold,
       coalesce(sum(r.quantity) FILTER (WHERE r.state = 'returned'), 0)::integer AS returned,
       coalesce(sum(r.quantity) FILTER (WHERE r.state = 'released'), 0)::integer AS released
FROM stock s LEFT JOIN stock_reservations r ON r.sku = s.sku
GROUP BY s.sku, s.on_hand, s.received
ORDER BY s.sku;

-- name: ChaosStockOfOrders :many
-- Reservations whose state disagrees with their key's order: sold of a
-- cancelled order, returned of one not cancelled, or either without an
-- order. A settled run has none.
SELECT r.scope, r.key, r.sku, r.quantity, r.state, coalesce(o.id::text, '')::text AS order_id,
       (o.cancelled_at IS NOT NULL)::boolean AS cancelled
FROM stock_reservations r
LEFT JOIN orders o ON o.customer_id::text = r.scope AND o.idempotency_key = r.key
WHERE (r.state = 'sold' AND (o.id IS NULL OR o.cancelled_at IS NOT NULL))
   OR (r.state = 'returned' AND (o.id IS NULL OR o.cancelled_at IS NULL));

-- name: ChaosRefundStoredAnswers :many
-- Every refund key with the answer it replays, byte for byte (its
-- Location, for the operator's 303): the history checker's last read of
-- each (bench/chaos/history).
SELECT k.scope, k.key, k.status, coalesce(k.response_status, 0)::integer AS response_status, k.response_body,
       coalesce(k.response_headers ->> 'Location', '')::text AS location
FROM idem_keys_v1 k
WHERE k.kind = 'refund';
