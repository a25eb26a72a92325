-- +goose Up

-- This deployment's marker (issue 33). Every PaymentIntent the shop creates
-- carries it in its metadata (deployment_id), and the reconciler and the
-- webhook handler refund only intents that carry it: one Stripe account may
-- hold intents of Payment Links, invoices, the dashboard, another app, or a
-- staging and a production shop, none of which this database made. It is
-- made once, here, so that every shop instance on this database shares it
-- and another database (staging, production) has another.
CREATE TABLE deployment (
    id            boolean     PRIMARY KEY DEFAULT true CHECK (id),
    deployment_id uuid        NOT NULL DEFAULT gen_random_uuid(),
    created_at    timestamptz NOT NULL DEFAULT now()
);
INSERT INTO deployment DEFAULT VALUES;

-- Succeeded PaymentIntents this database did not make (no order holds them,
-- no key row stores their id, and their metadata names another deployment,
-- or none, or a customer not of this database), recorded once each for an
-- operator and never touched: refunding another system's payment would
-- take money a customer paid for something real.
CREATE TABLE foreign_intents (
    payment_intent_id text        PRIMARY KEY,
    source            text        NOT NULL CHECK (source IN ('webhook', 'reconciler')),
    amount            bigint      NOT NULL,
    currency          text        NOT NULL,
    deployment_id     text        NOT NULL DEFAULT '',
    customer_id       text        NOT NULL DEFAULT '',
    created           bigint      NOT NULL,
    first_seen        timestamptz NOT NULL DEFAULT now()
);

-- PaymentIntents of this deployment that can still succeed
-- (requires_payment_method, requires_confirmation, requires_action,
-- processing) when a reconciler pass or a webhook met them, or succeeded
-- while their key was still started. The cursor passes them; each pass
-- reads them again by id until they are settled, so a late success (a
-- confirm retried after the pass, then the key lost to a failover) is
-- still seen.
CREATE TABLE reconciler_watched_intents (
    payment_intent_id text        PRIMARY KEY,
    first_seen        timestamptz NOT NULL DEFAULT now(),
    checked_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reconciler_watched_intents_checked_at ON reconciler_watched_intents (checked_at);

-- Refunds the provider refused for good (not a refusal that passes): the
-- intent is parked here for an operator, once, and the reconciler's cursor
-- moves on instead of reading it, and every intent after it, on every pass.
CREATE TABLE refused_refunds (
    payment_intent_id text        PRIMARY KEY,
    amount            bigint      NOT NULL,
    currency          text        NOT NULL,
    customer_id       uuid,
    key               text,
    reason            text        NOT NULL,
    at                timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE refused_refunds;
DROP TABLE reconciler_watched_intents;
DROP TABLE foreign_intents;
DROP TABLE deployment;
