package idemtest

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func TestUpPart(t *testing.T) {
	up, err := upPart(`-- +goose Up
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
	if _, err := upPart("CREATE TABLE a (x int);\n"); err == nil {
		t.Error("a file without -- +goose Up: got no error")
	}
	if _, err := upPart("-- +goose NO TRANSACTION\n-- +goose Up\nCREATE INDEX CONCURRENTLY i ON a (x);\n"); err == nil {
		t.Error("a NO TRANSACTION file: got no error")
	}
}

func TestNewPoolIsMigratedAndDropped(t *testing.T) {
	var name string
	t.Run("user", func(t *testing.T) {
		pool := NewPool(t)
		var n int
		if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM idem_keys").Scan(&n); err != nil {
			t.Fatalf("idem_keys: %v", err)
		}
		if err := pool.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	pool := NewPool(t)
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("got %d databases named %s after the test that made it, want 0", n, name)
	}
	if _, err := pgx.ParseConfig(NewDatabase(t)); err != nil {
		t.Errorf("NewDatabase: %v", err)
	}
}
