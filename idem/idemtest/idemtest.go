// Package idemtest helps tests of code built on the idem kit.
package idemtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ExpireLock ends the lease on a started key now, by the database clock, as
// if its holder had stopped heartbeating a lease ago: the next claim takes
// it over and the completer finds it. Tests use it instead of waiting.
func ExpireLock(tb testing.TB, pool *pgxpool.Pool, scope, key string) {
	tb.Helper()
	tag, err := pool.Exec(context.Background(),
		`UPDATE idem_keys SET locked_until = now() - interval '1 second'
		 WHERE scope = $1 AND key = $2 AND status = 'started'`, scope, key)
	if err != nil {
		tb.Fatalf("expire lock: %v", err)
	}
	if tag.RowsAffected() != 1 {
		tb.Fatalf("expire lock: got %d started keys %q, want 1", tag.RowsAffected(), key)
	}
}

// AgeAnswer makes a finished key look finished d ago, for sweeper tests.
func AgeAnswer(tb testing.TB, pool *pgxpool.Pool, scope, key string, ago string) {
	tb.Helper()
	if _, err := pool.Exec(context.Background(),
		`UPDATE idem_keys SET finished_at = now() - $3::interval WHERE scope = $1 AND key = $2`, scope, key, ago); err != nil {
		tb.Fatalf("age answer: %v", err)
	}
}
