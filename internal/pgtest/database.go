package pgtest

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// NewDatabase creates a database for tb alone, a copy of the migrated
// template, and returns its URL. The database is dropped when tb ends, after
// the cleanups registered later, such as closing pools on it.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, "", "")
}

// NewDatabaseSetting is NewDatabase with a setting of the database's own
// (ALTER DATABASE … SET), made before anyone connects, so that every
// connection has it, through PgBouncer too: such as synchronous_commit on,
// which the tests' server has off.
func NewDatabaseSetting(tb testing.TB, setting, value string) string {
	tb.Helper()
	return newDatabase(tb, setting, value)
}

func newDatabase(tb testing.TB, setting, value string) string {
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
	if setting != "" {
		if _, err := env.admin.Exec(tb.Context(), "ALTER DATABASE "+ident(name)+" SET "+ident(setting)+" = "+literal(value)); err != nil {
			tb.Fatalf("set %s on the test database: %v", setting, err)
		}
	}
	return databaseURL(name)
}

// literal quotes s as an SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

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
