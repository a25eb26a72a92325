package idem_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/idem/idemtest"
)

// takeoverStore is a store whose TookOver hook writes each takeover into a
// table of the test's own, in the takeover's transaction, and fails while
// refuse is set.
func takeoverStore(t *testing.T, refuse *bool) (*idem.Store, *pgxpool.Pool) {
	t.Helper()
	pool := idemtest.NewPool(t)
	if _, err := pool.Exec(context.Background(),
		`CREATE TABLE took (scope text, key text, by_completer boolean, attempt int, locked_until timestamptz)`); err != nil {
		t.Fatal(err)
	}
	s := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second,
		TookOver: func(ctx context.Context, tx pgx.Tx, to idem.Takeover) error {
			if *refuse {
				return errors.New("refused")
			}
			_, err := tx.Exec(ctx, `INSERT INTO took VALUES ($1, $2, $3, $4, $5)`,
				to.Scope, to.Key, to.ByCompleter, to.Attempt, to.LockedUntil)
			return err
		}})
	idem.SinceStart(s, time.Hour)
	return s, pool
}

func tookRows(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		`SELECT t.key || ' ' || CASE WHEN t.by_completer THEN 'completer ' || t.attempt ELSE 'request' END
		 FROM took t JOIN idem_keys_v1 k USING (scope, key)
		 WHERE t.locked_until = k.locked_until ORDER BY t.by_completer`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTookOverIsToldOfEveryTakeoverInItsTransaction(t *testing.T) {
	refuse := false
	s, pool := takeoverStore(t, &refuse)
	ctx := context.Background()

	claimLock(t, s, request("r", "a"))
	idemtest.ExpireLock(t, pool, "alice", "r")
	if l := claimLock(t, s, request("r", "a")); !l.TakenOver {
		t.Fatal("the retry did not take the key over")
	}

	claimLock(t, s, request("c", "a"))
	idemtest.ExpireLock(t, pool, "alice", "c")
	c := &idem.Completer{Store: s, Settler: idem.SettlerFunc(func(context.Context, *idem.Lock) (string, error) {
		return "left", nil
	})}
	if n, err := c.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("pass: got %d, %v, want 1 key", n, err)
	}

	if got, want := tookRows(t, pool), []string{"r request", "c completer 1"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestATakeoverWhoseHookFailsIsUndone(t *testing.T) {
	refuse := true
	s, pool := takeoverStore(t, &refuse)
	ctx := context.Background()
	l := claimLock(t, s, request("r", "a"))
	idemtest.ExpireLock(t, pool, "alice", "r")
	if _, err := s.Claim(ctx, request("r", "a")); err == nil {
		t.Fatal("a takeover whose hook failed: got no error")
	}
	c := &idem.Completer{Store: s, Settler: idem.SettlerFunc(func(context.Context, *idem.Lock) (string, error) {
		t.Error("the completer settled a key whose takeover failed")
		return "", nil
	})}
	if _, err := c.Pass(ctx); err == nil {
		t.Error("a completer's takeover whose hook failed: got no error")
	}
	// The key is still the first attempt's: its finish lands.
	if err := l.Finish(ctx, idem.Response{Status: 200}); err != nil {
		t.Errorf("finish of the attempt whose key was not taken over: %v", err)
	}
}
