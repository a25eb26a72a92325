-- +goose Up

-- One row per (scope, key): the memory of what was asked and what was
-- answered. scope is whoever owns the key (a customer, an API client, a
-- browser visitor): the same key sent by two owners names two operations.
--
-- operation_id names one life of a key and survives a takeover, so that a
-- key derived from it for a downstream call (a payment provider) stays the
-- same when another attempt finishes the work. lock_token names the attempt
-- that holds the key now; it changes on every takeover, and only the
-- attempt holding the current token may finish. locked_until is judged by
-- the database clock (now()), never by an application server's.
--
-- kind names the kind of operation a key protects (an order, a form's
-- reservation): several flows share the table, each with its own completer
-- and sweeper, which take only their own kind.
--
-- settle_attempts counts the completer's takeovers of a key whose attempt
-- died; parked_at is set when the completer gives up on it (a poison key)
-- and leaves it, still started, to an operator.
CREATE TABLE idem_keys (
    kind             text        NOT NULL CHECK (length(kind) <= 64),
    scope            text        NOT NULL CHECK (length(scope) BETWEEN 1 AND 255),
    key              text        NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    fingerprint      bytea       NOT NULL,
    status           text        NOT NULL DEFAULT 'started' CHECK (status IN ('started', 'finished')),
    operation_id     uuid        NOT NULL,
    lock_token       uuid        NOT NULL,
    locked_until     timestamptz NOT NULL,
    request          jsonb,
    response_status  integer,
    response_headers jsonb,
    response_body    bytea,
    created_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    settle_attempts  integer     NOT NULL DEFAULT 0,
    parked_at        timestamptz,
    PRIMARY KEY (scope, key),
    -- A finished key always has an answer to replay; a started one never does.
    CHECK ((status = 'finished') = (response_status IS NOT NULL AND finished_at IS NOT NULL))
);

-- The completer's search for started keys whose holder has gone.
CREATE INDEX idem_keys_stuck ON idem_keys (kind, locked_until) WHERE status = 'started' AND parked_at IS NULL;
-- The sweeper's search for old answers.
CREATE INDEX idem_keys_finished_at ON idem_keys (kind, finished_at) WHERE status = 'finished';

-- The claim of a new key and the fenced finish are SQL functions, so that a
-- caller whose own write must land in the same statement (to keep a new
-- operation at two round trips) calls the kit's rule instead of copying it:
--
--   WITH claimed AS MATERIALIZED (SELECT idem_claim(...) AS ok) INSERT ... WHERE ok
--   WITH finished AS MATERIALIZED (SELECT idem_finish(...) AS ok) INSERT ... WHERE ok
--
-- The kit's own queries (queries/keys.sql) call them too.

-- idem_claim inserts a new key, started and leased to the attempt holding
-- lock_token, and returns true; it returns false, changing nothing, when
-- the key exists (ON CONFLICT waits for a concurrent insert to commit).
-- +goose StatementBegin
CREATE FUNCTION idem_claim(p_scope text, p_key text, p_fingerprint bytea, p_lease interval,
                           p_request jsonb, p_operation_id uuid, p_lock_token uuid, p_kind text)
RETURNS boolean LANGUAGE sql VOLATILE AS $$
    WITH inserted AS (
        INSERT INTO idem_keys (kind, scope, key, fingerprint, operation_id, lock_token, locked_until, request)
        VALUES (p_kind, p_scope, p_key, p_fingerprint, p_operation_id, p_lock_token, now() + p_lease, p_request)
        ON CONFLICT (scope, key) DO NOTHING
        RETURNING true AS ok
    )
    SELECT EXISTS (SELECT FROM inserted);
$$;
-- +goose StatementEnd

-- idem_finish stores the answer of a key, only for the attempt holding
-- lock_token and only once, and returns whether it did. Both guards matter:
-- status = 'started' stops a second answer (under READ COMMITTED a finish
-- that waited on the row re-checks it against the row the first finish
-- committed); the token makes the current holder win and a stale holder,
-- taken over after its lease ran out, learn that it lost.
-- +goose StatementBegin
CREATE FUNCTION idem_finish(p_scope text, p_key text, p_lock_token uuid, p_status integer,
                            p_headers jsonb, p_body bytea)
RETURNS boolean LANGUAGE sql VOLATILE AS $$
    WITH finished AS (
        UPDATE idem_keys
        SET status = 'finished', response_status = p_status, response_headers = p_headers,
            response_body = p_body, finished_at = now()
        WHERE scope = p_scope AND key = p_key AND lock_token = p_lock_token AND status = 'started'
        RETURNING true AS ok
    )
    SELECT EXISTS (SELECT FROM finished);
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION idem_finish(text, text, uuid, integer, jsonb, bytea);
DROP FUNCTION idem_claim(text, text, bytea, interval, jsonb, uuid, uuid, text);
DROP TABLE idem_keys;
