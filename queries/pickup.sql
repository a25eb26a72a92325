-- name: InsertPickup :exec
INSERT INTO pickup_reservations (public_id, visitor, slot, name) VALUES (@public_id, @visitor, @slot, @name);

-- name: GetPickup :one
-- A visitor's reservation by its public id.
SELECT public_id, slot, name, created_at FROM pickup_reservations
WHERE public_id = @public_id AND visitor = @visitor;

-- name: GetPickupByNumber :one
-- A visitor's reservation by the sequence number that named it before
-- public ids (a stored answer finished before then still names it).
SELECT public_id, slot, name, created_at FROM pickup_reservations
WHERE id = @id AND visitor = @visitor;
