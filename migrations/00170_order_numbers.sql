-- +goose Up
-- The operator finds an order by the number a customer quotes
-- (views.OrderNumber: the id's last eight hex digits, "#3F9A0C12"), or by
-- its whole id: orders_pkey leads with the customer, whom the operator may
-- not know. One expression index serves both (queries/operator.sql,
-- OrdersByNumber). It costs every order's insert one index entry more.
CREATE INDEX orders_number ON orders (right(replace(id::text, '-', ''), 8));

-- +goose Down
DROP INDEX orders_number;
