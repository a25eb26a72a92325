-- +goose Up

-- Carts become resources with a version, so that an order can name exactly
-- the cart it pays for, and one cart version can be paid for only once.
--
-- version goes up with every change of the lines. order_key is the
-- idempotency key of this version's order: the browser's checkout page
-- mints it when it first renders this version (every later render, in any
-- tab, shows the same one), and an API order sets it when it claims its key.
-- A change of the lines clears it, a declined payment releases it, and a
-- claim under any other key is refused while it is set. order_id closes the
-- cart: it is written by the statement that writes the order.
CREATE TABLE carts (
    id           uuid        PRIMARY KEY,
    customer_id  uuid        NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    -- browser marks the shop pages' cart; a shopper has at most one open.
    browser      boolean     NOT NULL DEFAULT false,
    version      bigint      NOT NULL DEFAULT 1,
    order_key    text,
    order_key_at timestamptz,
    order_id     uuid,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CHECK ((order_key IS NULL) = (order_key_at IS NULL))
);

CREATE UNIQUE INDEX carts_one_open_browser_cart ON carts (customer_id) WHERE browser AND order_id IS NULL;
-- The cart an order closed, for its receipt.
CREATE INDEX carts_order_id ON carts (order_id) WHERE order_id IS NOT NULL;

CREATE TABLE cart_lines (
    cart_id  uuid    NOT NULL REFERENCES carts (id) ON DELETE CASCADE,
    sku      text    NOT NULL REFERENCES products (sku),
    quantity integer NOT NULL CHECK (quantity BETWEEN 1 AND 99),
    PRIMARY KEY (cart_id, sku)
);

-- Each shopper's cart so far becomes their open browser cart.
INSERT INTO carts (id, customer_id, browser)
SELECT gen_random_uuid(), customer_id, true FROM cart_items GROUP BY customer_id;
INSERT INTO cart_lines (cart_id, sku, quantity)
SELECT c.id, i.sku, i.quantity FROM cart_items i JOIN carts c ON c.customer_id = i.customer_id;
DROP TABLE cart_items;

-- The cart version a key pays for, so that the finish closes that cart in
-- the same statement as it writes the order, whoever finishes it (the
-- request or the completer). NULL for orders placed without a cart.
ALTER TABLE idempotency_keys
    ADD COLUMN cart_id      uuid,
    ADD COLUMN cart_version bigint;

-- +goose Down
ALTER TABLE idempotency_keys DROP COLUMN cart_version, DROP COLUMN cart_id;
CREATE TABLE cart_items (
    customer_id uuid    NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    sku         text    NOT NULL REFERENCES products (sku),
    quantity    integer NOT NULL CHECK (quantity BETWEEN 1 AND 99),
    PRIMARY KEY (customer_id, sku)
);
INSERT INTO cart_items (customer_id, sku, quantity)
SELECT c.customer_id, l.sku, l.quantity
FROM carts c JOIN cart_lines l ON l.cart_id = c.id
WHERE c.browser AND c.order_id IS NULL;
DROP TABLE cart_lines;
DROP TABLE carts;
