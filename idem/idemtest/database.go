package idemtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
)

// The variables NewDatabase reads. TEST_ADMIN_DATABASE_URL is for a
// TEST_DATABASE_URL that goes through a transaction pooler (PgBouncer): a
// direct superuser URL of the same server, on which databases are created,
// migrated and dropped.
const (
	envURL      = "TEST_DATABASE_URL"
	envAdminURL = "TEST_ADMIN_DATABASE_URL"
)

// errNoServer says what to do when TEST_DATABASE_URL is not set. idemtest
// starts no server of its own: a second launcher beside the one each
// project already has (a CI service, a container, pg_virtualenv) would be
// one more thing to keep working on every machine.
const errNoServer = `idemtest: TEST_DATABASE_URL is not set.
The tests need a PostgreSQL server, 15 or later, on which they may create databases:
set TEST_DATABASE_URL to a superuser postgres:// URL of one, for instance
    TEST_DATABASE_URL=postgres://postgres:secret@localhost:5432/postgres go test ./...
In the exactlyonce repository: make test/kit from its root, or in idem/
    make -C .. bin/testpg && ../bin/testpg -- go test ./...
A throwaway server for one command: on Debian or Ubuntu, pg_virtualenv (postgresql-common),
    pg_virtualenv sh -c 'TEST_DATABASE_URL=postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/postgres go test ./...'
or a container, on the URL above
    docker run -d -p 5432:5432 -e POSTGRES_PASSWORD=secret postgres:15`

// Main runs a test package whose tests call NewDatabase or NewPool, from its
// TestMain:
//
//	func TestMain(m *testing.M) { idemtest.Main(m) }
//
// The tests use the server TEST_DATABASE_URL names. Without it, the package
// fails once, saying what to set, rather than once per test.
func Main(m *testing.M) {
	if _, _, err := serverURLs(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// NewDatabase creates a database for tb alone on the server that
// TEST_DATABASE_URL names, applies the kit's migrations (idem.Migrate) to it
// and returns its URL. The database is dropped when tb ends, after the
// cleanups registered later, such as closing pools on it. Without
// TEST_DATABASE_URL, tb fails with what Main says.
//
// Databases named idemtest_* that a killed test binary left behind can be
// dropped.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	server, admin, err := serverURLs()
	if err != nil {
		tb.Fatal(err)
	}
	name := "idemtest_" + strings.ToLower(rand.Text())
	if err := adminExec(tb.Context(), admin, "CREATE DATABASE "+ident(name)); err != nil {
		tb.Fatalf("idemtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		// Not tb.Context(), which is cancelled by now. FORCE ends the
		// sessions a test left open rather than failing on them.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)"); err != nil {
			tb.Errorf("idemtest: drop database %s: %v", name, err)
		}
	})
	if err := migrate(tb.Context(), withDatabase(admin, name)); err != nil {
		tb.Fatalf("idemtest: migrate %s: %v", name, err)
	}
	return withDatabase(server, name)
}

// NewPool returns a pool on a new database of tb's own (see NewDatabase),
// closed when tb ends.
func NewPool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(tb.Context(), NewDatabase(tb))
	if err != nil {
		tb.Fatalf("idemtest: connect to test database: %v", err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// serverURLs returns the URL the tests connect through and the one on which
// databases are created, both with their database name still to be set.
func serverURLs() (server, admin *url.URL, err error) {
	raw := os.Getenv(envURL)
	if raw == "" {
		return nil, nil, errors.New(errNoServer)
	}
	if server, err = parseURL(envURL, raw); err != nil {
		return nil, nil, err
	}
	admin = server
	if raw := os.Getenv(envAdminURL); raw != "" {
		if admin, err = parseURL(envAdminURL, raw); err != nil {
			return nil, nil, err
		}
	}
	return server, admin, nil
}

func parseURL(name, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("idemtest: %s must be a postgres:// URL", name)
	}
	return u, nil
}

// withDatabase returns u with its database replaced by name.
func withDatabase(u *url.URL, name string) string {
	c := *u
	c.Path = "/" + name
	c.RawPath = ""
	return c.String()
}

// adminExec runs sql on the server's maintenance database (the one the
// admin URL names), on a connection of its own.
func adminExec(ctx context.Context, admin *url.URL, sql string) error {
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// migrate applies the kit's migrations with idem.Migrate, as an application
// without goose does.
func migrate(ctx context.Context, dbURL string) error {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	return idem.Migrate(ctx, pool)
}
