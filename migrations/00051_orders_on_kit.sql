-- +goose Up

-- Order keys move into the idempotency kit's table (idem/migrations, applied
-- before these): the kit claims, leases, takes over, finishes, settles and
-- sweeps them, and the shop keeps only what is about orders. The kind of an
-- order key is 'order' (checkout.KeyKind) and its scope its customer's id. The stored answer becomes bytes (the
-- kit replays a body byte for byte); the stored request (the priced order)
-- and the completer's count and parking move as they are.
INSERT INTO idem_keys (kind, scope, key, fingerprint, status, operation_id, lock_token, locked_until, request,
                       response_status, response_body, created_at, finished_at, settle_attempts, parked_at)
SELECT 'order', customer_id::text, key, fingerprint, status, operation_id, lock_token, locked_until, request,
       response_code, convert_to(response_body::text, 'UTF8'), created_at,
       CASE WHEN status = 'finished' THEN greatest(created_at, least(locked_until, now())) END,
       settle_attempts, parked_at
FROM idempotency_keys;

-- What the shop alone knows of an order key, written in the claim's
-- statement: the key it sent the payment provider for this life of the key
-- (checkout.ProviderKey), so that the reconciler can go from a charge in the
-- provider's list back to the key that made it; and the cart version the
-- order pays for, which the finish closes (NULL for orders placed without a
-- cart). It goes when the key does.
CREATE TABLE order_keys (
    scope        text   NOT NULL,
    key          text   NOT NULL,
    provider_key text   UNIQUE,
    cart_id      uuid,
    cart_version bigint,
    PRIMARY KEY (scope, key),
    FOREIGN KEY (scope, key) REFERENCES idem_keys (scope, key) ON DELETE CASCADE
);
INSERT INTO order_keys (scope, key, provider_key, cart_id, cart_version)
SELECT customer_id::text, key, provider_key, cart_id, cart_version FROM idempotency_keys;

DROP TABLE idempotency_keys;

-- +goose Down
CREATE TABLE idempotency_keys (
    customer_id     uuid        NOT NULL REFERENCES customers (id),
    key             text        NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    fingerprint     bytea       NOT NULL,
    status          text        NOT NULL DEFAULT 'started' CHECK (status IN ('started', 'finished')),
    locked_until    timestamptz NOT NULL,
    lock_token      uuid        NOT NULL,
    response_code   integer,
    response_body   jsonb,
    created_at      timestamptz NOT NULL DEFAULT now(),
    request         jsonb,
    operation_id    uuid        NOT NULL,
    provider_key    text,
    settle_attempts integer     NOT NULL DEFAULT 0,
    parked_at       timestamptz,
    cart_id         uuid,
    cart_version    bigint,
    PRIMARY KEY (customer_id, key),
    CHECK ((status = 'finished') = (response_code IS NOT NULL AND response_body IS NOT NULL))
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
CREATE INDEX idempotency_keys_started_locked_until ON idempotency_keys (locked_until) WHERE status = 'started';
CREATE INDEX idempotency_keys_provider_key ON idempotency_keys (provider_key);
INSERT INTO idempotency_keys (customer_id, key, fingerprint, status, locked_until, lock_token, response_code,
                              response_body, created_at, request, operation_id, provider_key, settle_attempts,
                              parked_at, cart_id, cart_version)
SELECT k.scope::uuid, k.key, k.fingerprint, k.status, k.locked_until, k.lock_token, k.response_status,
       convert_from(k.response_body, 'UTF8')::jsonb, k.created_at, k.request, k.operation_id, o.provider_key,
       k.settle_attempts, k.parked_at, o.cart_id, o.cart_version
FROM idem_keys k
JOIN order_keys o ON o.scope = k.scope AND o.key = k.key;
DELETE FROM idem_keys k USING order_keys o WHERE o.scope = k.scope AND o.key = k.key;
DROP TABLE order_keys;
