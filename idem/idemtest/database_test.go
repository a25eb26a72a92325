package idemtest

import (
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func TestParseUp(t *testing.T) {
	m, err := parseUp(`-- +goose NO TRANSACTION
-- +goose Up
-- a comment;
CREATE TABLE a (x int);

CREATE INDEX CONCURRENTLY a_x
    ON a (x);
-- +goose StatementBegin
CREATE FUNCTION f() RETURNS int AS $$
BEGIN
    RETURN 1;
END
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
-- trailing comment

-- +goose Down
DROP TABLE a;
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"-- a comment;\nCREATE TABLE a (x int);\n",
		"\nCREATE INDEX CONCURRENTLY a_x\n    ON a (x);\n",
		"CREATE FUNCTION f() RETURNS int AS $$\nBEGIN\n    RETURN 1;\nEND\n$$ LANGUAGE plpgsql;\n",
	}
	if !slices.Equal(m.statements, want) || !m.noTx {
		t.Errorf("got %q (no transaction: %v), want %q (true)", m.statements, m.noTx, want)
	}
	if _, err := parseUp("CREATE TABLE a (x int);\n"); err == nil {
		t.Error("a file without -- +goose Up: got no error")
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
