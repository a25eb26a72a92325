package pgtest

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// NewDatabase creates a database for tb alone, a copy of the migrated
// template, and returns its URL. The database is dropped when tb ends, after
// the cleanups registered later, such as closing pools on it.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	if env.admin == nil {
		tb.Fatal("pgtest: call pgtest.Main from the package's TestMain")
	}
	name := "test_" + randomName()
	if _, err := env.admin.Exec(tb.Context(), "CREATE DATABASE "+ident(name)+" TEMPLATE "+ident(env.template)); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		if err := dropDatabase(name); err != nil {
			tb.Error(err)
		}
	})
	return databaseURL(name)
}

// NewPool returns a pool on a new database of tb's own (see NewDatabase),
// closed when tb ends.
func NewPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(tb.Context(), NewDatabase(tb))
	if err != nil {
		tb.Fatalf("connect to test database: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}
