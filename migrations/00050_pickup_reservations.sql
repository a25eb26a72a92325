-- +goose Up

-- The second protected form: reserving a pickup slot, built on the idem kit
-- (docs/kit.md). visitor is the form key's scope, the hash of the browser's
-- session, not a customer: reserving needs no cart.
CREATE TABLE pickup_reservations (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    visitor    text        NOT NULL,
    slot       text        NOT NULL,
    name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX pickup_reservations_visitor ON pickup_reservations (visitor, id);

-- +goose Down
DROP TABLE pickup_reservations;
