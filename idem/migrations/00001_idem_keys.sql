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
CREATE TABLE idem_keys (
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
    PRIMARY KEY (scope, key),
    -- A finished key always has an answer to replay; a started one never does.
    CHECK ((status = 'finished') = (response_status IS NOT NULL AND finished_at IS NOT NULL))
);

-- The completer's search for started keys whose holder has gone.
CREATE INDEX idem_keys_stuck ON idem_keys (locked_until) WHERE status = 'started';
-- The sweeper's search for old answers.
CREATE INDEX idem_keys_finished_at ON idem_keys (finished_at) WHERE status = 'finished';

-- +goose Down
DROP TABLE idem_keys;
