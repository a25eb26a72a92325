package app

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"exactlyonce/internal/pgtest"
)

// web unpark hands a parked key back to the completer: its parking and its
// attempts go, and its lease ends; a key that is not parked, or a command
// without a scope and a key, is refused with what to do.
func TestUnpark(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := pool.Exec(ctx, `INSERT INTO idem_keys (kind, scope, key, fingerprint, operation_id, lock_token, locked_until, settle_attempts, parked_at)
		VALUES ('order', 'alice', 'k1', '\x00', gen_random_uuid(), gen_random_uuid(), now() + interval '1 hour', 5, now())`); err != nil {
		t.Fatal(err)
	}
	if err := unpark(ctx, pool, []string{"alice"}, log); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Fatalf("without a key: got %v, want the usage", err)
	}
	if err := unpark(ctx, pool, []string{"alice", "nope"}, log); err == nil || !strings.Contains(err.Error(), "no parked key") {
		t.Fatalf("a key that is not there: got %v, want no parked key", err)
	}
	if err := unpark(ctx, pool, []string{"alice", "k1"}, log); err != nil {
		t.Fatal(err)
	}
	var parked, leased bool
	var attempts int
	if err := pool.QueryRow(ctx, `SELECT parked_at IS NOT NULL, settle_attempts, locked_until > now() FROM idem_keys WHERE scope = 'alice' AND key = 'k1'`).
		Scan(&parked, &attempts, &leased); err != nil {
		t.Fatal(err)
	}
	if parked || attempts != 0 || leased {
		t.Fatalf("after unpark: parked %v, %d attempts, lease running %v; want none of them", parked, attempts, leased)
	}
	if err := unpark(ctx, pool, []string{"alice", "k1"}, log); err == nil {
		t.Fatal("unparking a key twice: want it refused, it is no longer parked")
	}
}
