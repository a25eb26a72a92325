package idem_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/idem/idemtest"
)

// age moves one of a key's times into the past, as if that much time had
// passed since: the test's stand-in for waiting.
func age(tb testing.TB, pool *pgxpool.Pool, column, key, by string) {
	tb.Helper()
	if _, err := pool.Exec(context.Background(),
		`UPDATE idem_keys SET `+column+` = `+column+` - $2::interval WHERE scope = 'alice' AND key = $1`, key, by); err != nil {
		tb.Fatal(err)
	}
}

// A client that keeps asking about a key whose holder is slow is not a
// client that gave up: the completer's grace counts from its last ask, not
// from the claim, so the client's own retry takes the key over once the
// lease runs out, instead of the completer settling it under the client.
func TestCompleterGraceCountsFromTheLastAsk(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	r := request("asked", "a")
	claimLock(t, s, r)
	age(t, pool, "created_at", "asked", "1 hour") // claimed long ago

	// The client asks again while the lease runs: 409, and its ask counts.
	if _, err := s.Claim(ctx, r); !errors.Is(err, idem.ErrInProgress) {
		t.Fatalf("retry under the lease: got %v, want in progress", err)
	}
	idemtest.ExpireLock(t, pool, "alice", "asked")
	settled := 0
	c := &idem.Completer{Store: s, Grace: time.Minute, Settler: idem.SettlerFunc(func(ctx context.Context, l *idem.Lock) (string, error) {
		settled++
		return "released", l.Release(ctx)
	})}
	if n, err := c.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("pass a moment after the client asked: got %d keys, %v, want 0: the grace counts from the ask", n, err)
	}
	// Once the client has been quiet for the grace, the key is the completer's.
	age(t, pool, "asked_at", "asked", "2 minutes")
	if n, err := c.Pass(ctx); err != nil || n != 1 || settled != 1 {
		t.Fatalf("pass after the grace: got %d keys (%d settled), %v, want 1", n, settled, err)
	}
}
