package idem_test

import (
	"context"
	"io/fs"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/idem/idemtest"
)

func TestUpPart(t *testing.T) {
	up, err := idem.UpPart(`-- +goose Up
CREATE TABLE a (x int);
-- +goose StatementBegin
CREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql;
-- +goose StatementEnd

-- +goose Down
DROP TABLE a;
`)
	if err != nil {
		t.Fatal(err)
	}
	want := "\nCREATE TABLE a (x int);\n-- +goose StatementBegin\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql;\n-- +goose StatementEnd\n\n"
	if up != want {
		t.Errorf("got %q, want %q", up, want)
	}
	if _, err := idem.UpPart("CREATE TABLE a (x int);\n"); err == nil {
		t.Error("a file without -- +goose Up: got no error")
	}
	if _, err := idem.UpPart("-- +goose NO TRANSACTION\n-- +goose Up\nCREATE INDEX CONCURRENTLY i ON a (x);\n"); err == nil {
		t.Error("a NO TRANSACTION file: got no error")
	}
}

// Migrate applies the kit's schema once, however often and from however many
// instances it runs; idem.Migrations is the same schema, rooted for goose.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, idemtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	done := make(chan error, 3)
	for range 3 {
		go func() { done <- idem.Migrate(ctx, pool) }()
	}
	for range 3 {
		if err := <-done; err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
	files, err := fs.Glob(idem.Migrations, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("idem.Migrations holds %v (%v), want the migrations at its root", files, err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM idem_schema_versions`).Scan(&n); err != nil || n != len(files) {
		t.Errorf("got %d versions recorded (%v), want %d", n, err, len(files))
	}
}
