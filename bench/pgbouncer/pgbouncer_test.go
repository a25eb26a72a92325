package pgbouncer_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/bench/pgbouncer"
	"exactlyonce/localpg"
)

// TestTransactionPooling starts PostgreSQL and PgBouncer and shows what the
// shop's configuration relies on: through PgBouncer 1.18 in transaction
// pooling, pgx's default named prepared statements break once connections
// are shared, cache_describe works, and a transaction-scoped advisory lock
// holds for its transaction.
func TestTransactionPooling(t *testing.T) {
	if _, err := exec.LookPath("pgbouncer"); err != nil {
		if _, err := os.Stat("/usr/sbin/pgbouncer"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("pgbouncer is not installed (scripts/install-deps installs it)")
			}
			t.Skip("pgbouncer is not installed")
		}
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("/tmp", "pgbouncer-test-")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Throwaway: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(context.Background()) })
	b, err := pgbouncer.Start(ctx, srv.URL("postgres"), pgbouncer.Options{PoolSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Stop() })

	pool, err := pgxpool.New(ctx, b.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if got := pool.Config().ConnConfig.DefaultQueryExecMode; got != pgx.QueryExecModeCacheDescribe {
		t.Fatalf("URL's query mode: got %v, want cache_describe", got)
	}
	// Many clients, few server connections: every query with arguments
	// must work whichever server connection it lands on.
	errs := make(chan error, 20)
	for i := range 20 {
		go func() {
			var n int
			errs <- pool.QueryRow(ctx, "SELECT $1::int + 1", i).Scan(&n)
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatalf("cache_describe through PgBouncer: %v", err)
		}
	}
	// A transaction-scoped advisory lock is held by the transaction, which
	// PgBouncer keeps on one server connection.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(42)"); err != nil {
		t.Fatal(err)
	}
	var free bool
	if err := pool.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock(42)").Scan(&free); err != nil {
		t.Fatal(err)
	}
	if free {
		t.Error("another transaction took the advisory lock a transaction holds")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// The pool mode is transaction: PgBouncer's console says so.
	cfg, _ := pgx.ParseConfig(strings.Replace(b.URL("pgbouncer"), "cache_describe", "simple_protocol", 1))
	console, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer console.Close(ctx)
	rows, err := console.Query(ctx, "SHOW POOLS")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for rows.Next() {
		vals, _ := rows.Values()
		fields := rows.FieldDescriptions()
		for i, f := range fields {
			if f.Name == "pool_mode" && vals[i] == "transaction" {
				found = true
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Error("SHOW POOLS lists no pool in transaction mode")
	}
}
