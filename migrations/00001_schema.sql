-- +goose Up

-- Shoppers. API clients authenticate with a bearer token of 32 random bytes;
-- only its SHA-256 is stored, which is enough for a secret of that entropy
-- (no slow hash needed) and lets the lookup use an index.
CREATE TABLE customers (
    id         uuid        PRIMARY KEY,
    name       text        NOT NULL DEFAULT '',
    token_hash bytea       UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- The catalog. Prices are integers in minor units (cents) so that no amount
-- is ever a float. On Citus this would be a reference table.
CREATE TABLE products (
    sku      text   PRIMARY KEY,
    name     text   NOT NULL,
    price    bigint NOT NULL CHECK (price > 0),
    currency text   NOT NULL CHECK (currency ~ '^[a-z]{3}$')
);

-- One row per (customer, key): the memory of what was asked and what was
-- answered. The primary key starts with customer_id so that keys are scoped to
-- their owner and the table can be distributed by customer.
CREATE TABLE idempotency_keys (
    customer_id   uuid        NOT NULL REFERENCES customers (id),
    key           text        NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    fingerprint   bytea       NOT NULL,
    status        text        NOT NULL DEFAULT 'started' CHECK (status IN ('started', 'finished')),
    locked_until  timestamptz NOT NULL,
    lock_token    uuid        NOT NULL,
    response_code integer,
    response_body jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (customer_id, key),
    -- A finished key always has a response to replay; a started one never does.
    CHECK ((status = 'finished') = (response_code IS NOT NULL AND response_body IS NOT NULL))
);

-- Serves the expiry sweep and the search for stuck keys.
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- Orders deliberately have no unique constraint on the idempotency key: a key
-- may legitimately start a new order once it has expired, and the lock token
-- (not a constraint) is what stops two attempts of one operation both writing.
CREATE TABLE orders (
    customer_id     uuid        NOT NULL REFERENCES customers (id),
    id              uuid        NOT NULL,
    idempotency_key text        NOT NULL,
    amount          bigint      NOT NULL CHECK (amount > 0),
    currency        text        NOT NULL,
    charge_id       text        NOT NULL,
    items           jsonb       NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (customer_id, id)
);

-- The fake payment provider keeps its state in a schema of its own, as a real
-- provider would keep it in its own database: it outlives a crash of the web
-- process, which is what lets a retry recover a charge whose response was lost.
CREATE SCHEMA provider;

CREATE TABLE provider.charges (
    id              text        PRIMARY KEY,
    idempotency_key text        NOT NULL UNIQUE,
    params_hash     bytea       NOT NULL,
    amount          bigint      NOT NULL,
    currency        text        NOT NULL,
    card_last4      text        NOT NULL,
    description     text        NOT NULL DEFAULT '',
    status          text        NOT NULL CHECK (status IN ('succeeded', 'declined')),
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP SCHEMA provider CASCADE;
DROP TABLE orders;
DROP TABLE idempotency_keys;
DROP TABLE products;
DROP TABLE customers;
