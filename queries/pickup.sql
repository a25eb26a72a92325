-- name: InsertPickup :one
INSERT INTO pickup_reservations (visitor, slot, name) VALUES (@visitor, @slot, @name)
RETURNING id;

-- name: GetPickup :one
SELECT id, slot, name, created_at FROM pickup_reservations
WHERE id = @id AND visitor = @visitor;
