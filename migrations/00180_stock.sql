-- +goose Up

-- Stock (issue 40). A product with a row here has a limited quantity; one
-- without is made to order, as every product was before, and is never sold
-- out. on_hand is what can still be claimed; received is all that ever came
-- in, so that at every moment
--     received = on_hand + reserved + sold
-- with reserved and sold counted in stock_reservations.
--
-- The claim takes the order's quantities off on_hand in its own statement
-- (ClaimOrderKey); two claims of the last item serialize on the row's lock,
-- and the second finds on_hand at 0: the CHECK refuses it, the statement
-- fails as a whole, and nothing is claimed, so nothing is charged. The
-- constraint's name is how the shop tells "sold out" from other failures
-- (internal/database).
CREATE TABLE stock (
    sku      text    PRIMARY KEY REFERENCES products (sku),
    on_hand  integer NOT NULL CONSTRAINT stock_sold_out CHECK (on_hand >= 0),
    received integer NOT NULL CHECK (received >= on_hand)
);

-- What each key's claim took off on_hand, per product, and what became of
-- it: held while the key is started, sold with its order (FinishOrder), or
-- released, exactly once, when the key ends with no order (FinishKey: a
-- decline, the completer's "no charge", an abandoned authentication). The
-- state moves only from reserved, in the fenced statement that ends the key.
CREATE TABLE stock_reservations (
    scope       text        NOT NULL,
    key         text        NOT NULL,
    sku         text        NOT NULL REFERENCES products (sku),
    quantity    integer     NOT NULL CHECK (quantity > 0),
    state       text        NOT NULL DEFAULT 'reserved' CHECK (state IN ('reserved', 'sold', 'released')),
    reserved_at timestamptz NOT NULL DEFAULT now(),
    ended_at    timestamptz,
    PRIMARY KEY (scope, key, sku)
);

CREATE INDEX stock_reservations_held ON stock_reservations (sku) WHERE state = 'reserved';

-- +goose Down
DROP TABLE stock_reservations;
DROP TABLE stock;
