-- +goose Up

-- The browser shopper's cart. Writes set a quantity rather than add to one,
-- so a form submitted twice leaves the same cart as one submitted once. The
-- amount is never stored here: checkout prices the lines from the catalog.
CREATE TABLE cart_items (
    customer_id uuid    NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
    sku         text    NOT NULL REFERENCES products (sku),
    quantity    integer NOT NULL CHECK (quantity BETWEEN 1 AND 99),
    PRIMARY KEY (customer_id, sku)
);

-- +goose Down
DROP TABLE cart_items;
