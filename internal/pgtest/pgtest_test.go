package pgtest_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestNewPoolIsMigrated(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	if n := count(t, pool, "SELECT count(*) FROM goose_db_version WHERE version_id > 0"); n == 0 {
		t.Errorf("got %d migrations applied, want some", n)
	}
	if n := count(t, pool, "SELECT count(*) FROM idem_keys"); n != 0 {
		t.Errorf("got %d idempotency keys, want 0", n)
	}
}

func TestNewPoolIsolatesDatabases(t *testing.T) {
	t.Parallel()
	a, b := pgtest.NewPool(t), pgtest.NewPool(t)
	if _, err := a.Exec(t.Context(), "INSERT INTO products (sku, name, price, currency) VALUES ('mug', 'Mug', 1200, 'eur')"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, a, "SELECT count(*) FROM products WHERE sku = 'mug'"); n != 1 {
		t.Errorf("database written to: got %d products, want 1", n)
	}
	if n := count(t, b, "SELECT count(*) FROM products WHERE sku = 'mug'"); n != 0 {
		t.Errorf("other database: got %d products, want 0", n)
	}
}

func TestNewDatabaseIsDroppedAtCleanup(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("user", func(t *testing.T) {
		cfg, err := pgx.ParseConfig(pgtest.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		name = cfg.Database
	})
	pool := pgtest.NewPool(t)
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("got %d databases named %s after the test that made it, want 0", n, name)
	}
}

func count(tb testing.TB, pool *pgxpool.Pool, sql string) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(tb.Context(), sql).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return n
}
