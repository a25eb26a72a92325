package loadtest

// MinimalSchema creates the tables of pgbench/minimal.sql, the minimal
// pattern of an exactly-once order: a key row with its lock token and
// stored answer, the provider's charge by its idempotency key, and the
// order. Each has the primary key the pattern's lookups need and nothing
// more, so that the pattern's rate is what PostgreSQL does for the work
// itself on this machine.
const MinimalSchema = `
CREATE TABLE IF NOT EXISTS minimal_keys (
    scope           text        NOT NULL,
    key             text        NOT NULL,
    status          text        NOT NULL DEFAULT 'started',
    lock_token      bigint      NOT NULL,
    locked_until    timestamptz NOT NULL,
    response_status integer,
    response_body   jsonb,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);
CREATE TABLE IF NOT EXISTS minimal_charges (
    idempotency_key text        PRIMARY KEY,
    amount          bigint      NOT NULL,
    currency        text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS minimal_orders (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope      text        NOT NULL,
    key        text        NOT NULL,
    charge_key text        NOT NULL,
    amount     bigint      NOT NULL,
    currency   text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (scope, key)
);`
