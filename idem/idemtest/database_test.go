package idemtest

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

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
