// Package pgtest gives each integration test a PostgreSQL database of its own,
// migrated and empty, so that tests can run in parallel without seeing each
// other's rows. Main starts a throwaway server for the test binary and
// migrates a template database once; NewPool then copies the template, which
// is much quicker than migrating.
//
// Set TEST_DATABASE_URL to a superuser URL to use an existing server instead;
// make test sets it to the one server of its run (bench/cmd/testpg). Test binaries
// can then share the server, each with a template of its own under a unique
// name, dropped with its copies when the binary ends.
// When that URL goes through a transaction pooler (PgBouncer), also set
// TEST_ADMIN_DATABASE_URL to a direct superuser URL of the same server: it
// creates and drops the databases and migrates the template (goose's lock is
// session-level), while the tests connect through TEST_DATABASE_URL.
// Databases named template_app_* and test_* that a crashed test binary left
// there can be dropped.
package pgtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/internal/database"
	"exactlyonce/localpg"
)

// env is what Main prepares for NewDatabase. It is package state because
// TestMain and the tests share nothing else; Main writes it before m.Run and
// the tests only read it.
var env struct {
	admin    *pgxpool.Pool // superuser connections to the maintenance database
	server   *url.URL      // the admin URL, whose path NewDatabase replaces
	template string
}

// Main starts a throwaway server (or uses TEST_DATABASE_URL), creates the
// migrated template database, runs the tests and exits with their result.
// Integration test packages call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	os.Exit(run(m))
}

// run holds everything Main does before exiting, so that its deferred
// teardown runs. A test that panics kills the process before that; the
// throwaway server's watchdog cleans up then.
func run(m *testing.M) int {
	ctx := context.Background()
	teardown, err := setUp(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		return 1
	}
	defer teardown()
	return m.Run()
}

func setUp(ctx context.Context) (teardown func(), err error) {
	var undo []func()
	undoAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			undoAll()
		}
	}()

	adminURL := os.Getenv("TEST_DATABASE_URL")
	env.template = "template_app"
	if adminURL == "" {
		srv, err := startServer(ctx)
		if err != nil {
			return nil, err
		}
		undo = append(undo, func() {
			if err := srv.Stop(context.Background()); err != nil {
				fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			}
		})
		adminURL = srv.URL("postgres")
	} else {
		// Other test binaries may share the server, and a database that is
		// being copied cannot also be migrated: each gets its own template.
		env.template += "_" + randomName()
	}
	if env.server, err = url.Parse(adminURL); err != nil || (env.server.Scheme != "postgres" && env.server.Scheme != "postgresql") {
		return nil, fmt.Errorf("TEST_DATABASE_URL must be a postgres:// URL")
	}
	if direct := os.Getenv("TEST_ADMIN_DATABASE_URL"); direct != "" {
		adminURL = direct
	}
	if env.admin, err = pgxpool.New(ctx, adminURL); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	undo = append(undo, env.admin.Close)

	if _, err := env.admin.Exec(ctx, "CREATE DATABASE "+ident(env.template)); err != nil {
		return nil, fmt.Errorf("create template database: %w", err)
	}
	undo = append(undo, func() {
		if err := dropDatabase(env.template); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		}
	})
	if err := migrate(ctx, adminDatabaseURL(adminURL, env.template)); err != nil {
		return nil, err
	}
	return undoAll, nil
}

// startServer starts a throwaway server in a new directory under /tmp (not
// TMPDIR, which can be too long a path for a socket or out of the server
// user's reach).
func startServer(ctx context.Context) (*localpg.Server, error) {
	dir, err := os.MkdirTemp("/tmp", "pgtest-")
	if err != nil {
		return nil, err
	}
	began := time.Now()
	srv, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Throwaway: true})
	if err != nil {
		// Only if Start failed before initdb is the directory still empty;
		// otherwise the watchdog Start armed deletes it.
		os.Remove(dir)
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "pgtest: started PostgreSQL in %s (%.1fs)\n", dir, time.Since(began).Seconds())
	return srv, nil
}

// migrate applies the migrations to the template through a pool that is
// closed again before return: a database cannot be copied while anyone is
// connected to it. Only the shop's and the kit's: the fake Stripe applies
// its own schema where it runs (internal/stripetest).
func migrate(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("connect to template: %w", err)
	}
	defer pool.Close()
	return database.Migrate(ctx, pool)
}

func databaseURL(name string) string {
	u := *env.server
	u.Path = "/" + name
	return u.String()
}

// adminDatabaseURL is the URL of database name on the admin connection's
// server (TEST_ADMIN_DATABASE_URL when set).
func adminDatabaseURL(adminURL, name string) string {
	u, err := url.Parse(adminURL)
	if err != nil {
		return databaseURL(name)
	}
	u.Path = "/" + name
	return u.String()
}

func dropDatabase(name string) error {
	// FORCE ends sessions a test left open rather than failing on them.
	if _, err := env.admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+ident(name)+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// randomName returns a suffix that makes a database name unique, in lower
// case so that it needs no quoting in psql.
func randomName() string { return strings.ToLower(rand.Text()) }
