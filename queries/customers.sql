-- name: CreateCustomer :exec
INSERT INTO customers (id, name, token_hash) VALUES (@id, @name, @token_hash);

-- name: CustomerByTokenHash :one
SELECT id, name FROM customers WHERE token_hash = @token_hash;

-- name: CustomerExists :one
SELECT EXISTS (SELECT FROM customers WHERE id = @id);
