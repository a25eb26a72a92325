-- +goose Up

-- A product's one line of copy under its name in the catalog. The demo's
-- descriptions are written by catalog.Seed, which fills an empty one and
-- leaves one an operator wrote alone.
ALTER TABLE products ADD COLUMN description text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE products DROP COLUMN description;
