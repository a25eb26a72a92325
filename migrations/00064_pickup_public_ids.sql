-- +goose Up

-- Reservations are named by an opaque, random-looking id (a UUIDv7, as
-- orders are) instead of their sequence number, which told anyone holding
-- two of them how many reservations were made in between. The number stays
-- as the row's key, and a stored answer that names one (a key finished
-- before this migration, still replayed within the retention) still leads
-- to its reservation.
ALTER TABLE pickup_reservations ADD COLUMN public_id uuid;
UPDATE pickup_reservations SET public_id = gen_random_uuid();
ALTER TABLE pickup_reservations ALTER COLUMN public_id SET NOT NULL;
CREATE UNIQUE INDEX pickup_reservations_public_id ON pickup_reservations (public_id);

-- +goose Down
ALTER TABLE pickup_reservations DROP COLUMN public_id;
