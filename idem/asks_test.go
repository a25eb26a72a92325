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

// releasing is a completer with a grace of a minute whose settling only
// gives the key back, and the count of the keys it settled.
func releasing(s *idem.Store) (*idem.Completer, *int) {
	settled := new(int)
	return &idem.Completer{Store: s, Grace: time.Minute, Settler: idem.SettlerFunc(func(ctx context.Context, l *idem.Lock) (string, error) {
		*settled++
		return "released", l.Release(ctx)
	})}, settled
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
	age(t, pool, "created_at", "asked", "5 minutes") // claimed a while ago (asks count for the lease and ten graces)

	// The client asks again while the lease runs: 409, and its ask counts.
	if _, err := s.Claim(ctx, r); !errors.Is(err, idem.ErrInProgress) {
		t.Fatalf("retry under the lease: got %v, want in progress", err)
	}
	idemtest.ExpireLock(t, pool, "alice", "asked")
	c, settled := releasing(s)
	if n, err := c.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("pass a moment after the client asked: got %d keys, %v, want 0: the grace counts from the ask", n, err)
	}
	// Once the client has been quiet for the grace, the key is the completer's.
	age(t, pool, "asked_at", "asked", "2 minutes")
	if n, err := c.Pass(ctx); err != nil || n != 1 || *settled != 1 {
		t.Fatalf("pass after the grace: got %d keys (%d settled), %v, want 1", n, *settled, err)
	}
}

// A client that asks again and again about a key no retry of its can take
// over (too old to resume, the database away, refused by a rate limit)
// would keep the completer away for ever if every ask extended the grace:
// the key stays started, and the client is told to retry for ever. Asks
// stop counting once the key is older than its lease and ten graces
// (Completer.AsksFor); past that, the completer settles it a grace after its lease ran
// out, however recently its client asked.
func TestAsksStopExtendingTheGraceOfAnOldKey(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	r := request("asked-for-ever", "a")
	claimLock(t, s, r)
	idemtest.ExpireLock(t, pool, "alice", "asked-for-ever")
	c, _ := releasing(s)
	// Young, and asked about a moment ago: the client's.
	age(t, pool, "created_at", "asked-for-ever", "2 minutes")
	if err := s.Ask(ctx, "alice", "asked-for-ever"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("pass over a young key asked about a moment ago: got %d keys, %v, want 0", n, err)
	}
	// Old, and asked about a moment ago again: the completer's.
	age(t, pool, "created_at", "asked-for-ever", "1 hour")
	if err := s.Ask(ctx, "alice", "asked-for-ever"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("pass over a key asked about for an hour: got %d keys, %v, want 1: asks must not hold it off for ever", n, err)
	}
}

// Ask records the ask of a client refused before any claim (a rate limit):
// the completer's grace counts from it, as from a claim told 409.
func TestAskBeforeAClaimCounts(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	r := request("asked-early", "a")
	claimLock(t, s, r)
	idemtest.ExpireLock(t, pool, "alice", "asked-early")
	age(t, pool, "created_at", "asked-early", "2 minutes")
	c, _ := releasing(s)
	if err := s.Ask(ctx, "alice", "asked-early"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("pass a moment after the client was refused: got %d keys, %v, want 0", n, err)
	}
}

// An ask held in memory from before the key existed (a shop cut off from
// the database noted its client's ask, and meanwhile another shop's claim
// created the key) is written once the database is back: the grace must
// count from the key's claim, not from the older ask, or the completer
// settles the key under a client that is still retrying. Found by the
// chaos runs with network partitions (docs/analysis.md): asked_at was
// written as greatest(NULL, the old ask), which is the old ask.
func TestAskOlderThanTheKeyCountsFromTheClaim(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	r := request("asked-before", "a")
	claimLock(t, s, r)
	idemtest.ExpireLock(t, pool, "alice", "asked-before")
	idem.FlushHeldAsk(s, "alice", "asked-before", 5*time.Minute)
	if err := s.Ask(ctx, "alice", "other"); err != nil { // any flush writes the held ask
		t.Fatal(err)
	}
	var before bool
	if err := pool.QueryRow(ctx, `SELECT asked_at < created_at FROM idem_keys WHERE scope = 'alice' AND key = 'asked-before'`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if before {
		t.Errorf("asked_at was written before the key's claim")
	}
	c, _ := releasing(s)
	if n, err := c.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("pass a moment after the claim: got %d keys, %v, want 0: the grace counts from the claim", n, err)
	}
}

// A parked key was given up by the completer (its settling failed with a
// poison error MaxAttempts times) and is left to an operator: a retry must
// not take it over and write what the completer refused.
func TestParkedKeyIsNeverTakenOver(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	r := request("parked", "a")
	claimLock(t, s, r)
	idemtest.ExpireLock(t, pool, "alice", "parked")
	c := &idem.Completer{Store: s, MaxAttempts: 1, Settler: idem.SettlerFunc(func(context.Context, *idem.Lock) (string, error) {
		return "", idem.Poison(errors.New("refused by the provider"))
	})}
	if n, err := c.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("completer pass: got %d keys, %v, want 1", n, err)
	}
	idemtest.ExpireLock(t, pool, "alice", "parked")
	claim, err := s.Claim(ctx, r)
	if claim.Lock != nil || !errors.Is(err, idem.ErrInProgress) {
		t.Fatalf("retry of a parked key: got %+v, %v, want in progress and no lock", claim, err)
	}
	var parked bool
	if err := pool.QueryRow(ctx, `SELECT parked_at IS NOT NULL FROM idem_keys WHERE scope = 'alice' AND key = 'parked'`).Scan(&parked); err != nil || !parked {
		t.Fatalf("got parked %v, %v, want the key still parked", parked, err)
	}
}

// An operator who has dealt with a parked key's cause unparks it, and the
// completer's next pass settles it, with its attempts counted afresh; a key
// that is not parked cannot be unparked.
func TestUnparkHandsTheKeyBackToTheCompleter(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	r := request("unpark", "a")
	claimLock(t, s, r)
	if err := s.Unpark(ctx, "alice", "unpark"); !errors.Is(err, idem.ErrNotFound) {
		t.Fatalf("unpark a key that is not parked: got %v, want idem.ErrNotFound", err)
	}
	idemtest.ExpireLock(t, pool, "alice", "unpark")
	cured := false
	var attempts []int
	c := &idem.Completer{Store: s, MaxAttempts: 1, Grace: time.Nanosecond,
		Settler: idem.SettlerFunc(func(ctx context.Context, l *idem.Lock) (string, error) {
			if !cured {
				return "", idem.Poison(errors.New("refused by the provider"))
			}
			return "released", l.Release(ctx)
		}),
		Observe: func(_ context.Context, st idem.Settled) { attempts = append(attempts, st.Attempt) }}
	if n, err := c.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("completer pass: got %d keys, %v, want 1", n, err)
	}
	idemtest.ExpireLock(t, pool, "alice", "unpark")
	if n, err := c.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("completer pass over the parked key: got %d keys, %v, want none", n, err)
	}
	cured = true
	if err := s.Unpark(ctx, "alice", "unpark"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("completer pass after unpark: got %d keys, %v, want 1", n, err)
	}
	if _, err := s.Get(ctx, "alice", "unpark"); !errors.Is(err, idem.ErrNotFound) {
		t.Fatalf("the key after it was settled: got %v, want it released", err)
	}
	if len(attempts) != 2 || attempts[1] != 1 {
		t.Errorf("got attempts %v, want [1 1]: unparking counts them afresh", attempts)
	}
}

// A client that hangs up on a claim held back by the database (a stalled
// server, the key's row locked by a long transaction) was there when it
// asked: its ask counts, though no answer reached it. Before, only a claim
// told "in progress" or "unavailable" counted, and a client whose every
// retry hung for its own timeout looked silent to the completer, which
// settled its key "not completed" while it was still retrying (make
// chaos: 18 of 10,000 checkouts, 6 December 2026).
func TestClaimTheClientHungUpOnCountsAsAnAsk(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	r := request("hung", "a")
	claimLock(t, s, r)
	idemtest.ExpireLock(t, pool, "alice", "hung")

	// A long transaction holds the key's row while the client's retry
	// waits; the client hangs up before the row is let go.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT FROM idem_keys WHERE scope = 'alice' AND key = 'hung' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	hungUp, cancel := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancel)
	if _, err := s.Claim(hungUp, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("claim the client hung up on: got %v, want it canceled", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// The next looks at the database (completer passes) write the ask,
	// once the abandoned statement's session has let the row go too.
	c, _ := releasing(s)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c.Pass(ctx) //nolint:errcheck // judged by asked_at
		var asked bool
		if err := pool.QueryRow(ctx, `SELECT asked_at IS NOT NULL FROM idem_keys WHERE scope = 'alice' AND key = 'hung'`).Scan(&asked); err != nil {
			t.Fatal(err)
		}
		if asked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("got no ask recorded for the claim the client hung up on in 5 s, want asked_at set")
		}
	}
}

// A completer pass whose takeover the database answered only after a long
// wait (a stalled server) cannot trust what asked_at says: the asks clients
// made meanwhile wait in other processes for their own calls to get
// through. It gives the key back, unsettled, and holds off for a grace, as
// after an outage.
func TestCompleterGivesBackAKeyItTookOverSlowly(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	r := request("slow", "a")
	claimLock(t, s, r)
	idemtest.ExpireLock(t, pool, "alice", "slow")
	age(t, pool, "created_at", "slow", "2 minutes")

	// A stand-in for a stalled server: the takeover waits for a lock on
	// the whole table for longer than a healthy database takes to answer.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE idem_keys IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(1500*time.Millisecond, func() { tx.Rollback(ctx) }) //nolint:errcheck // the test ends with it
	c, settled := releasing(s)
	c.Pass(ctx) //nolint:errcheck // judged by what became of the key
	if *settled != 0 {
		t.Fatal("got the key settled by a takeover the database answered late, want it given back")
	}
	var started, expired bool
	var attempts int
	if err := pool.QueryRow(ctx, `SELECT status = 'started', locked_until <= now(), settle_attempts FROM idem_keys WHERE scope = 'alice' AND key = 'slow'`).
		Scan(&started, &expired, &attempts); err != nil {
		t.Fatal(err)
	}
	if !started || !expired || attempts != 0 {
		t.Fatalf("got the key started %v, its lease over %v, %d settle attempts; want it started, free to take, 0 attempts", started, expired, attempts)
	}
	// And the completer holds off for a grace, as after an outage.
	if n, err := c.Pass(ctx); err != nil || n != 0 || *settled != 0 {
		t.Fatalf("the next pass: got %d keys (%d settled), %v, want none within the grace", n, *settled, err)
	}
}

// A process that has just started knows nothing of the asks its
// predecessor kept in memory (gone with it, a kill -9 during an outage)
// nor of an outage the other instances are still recovering from: its
// completer takes no key for a grace, as after an outage. make chaos saw
// an instance restarted during a stall of PostgreSQL settle, at its first
// pass, keys whose clients were retrying.
func TestNewStoreHoldsItsCompleterOff(t *testing.T) {
	ctx := context.Background()
	_, pool := newStore(t)
	s := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	r := request("restarted", "a")
	claimLock(t, s, r)
	idemtest.ExpireLock(t, pool, "alice", "restarted")
	age(t, pool, "created_at", "restarted", "2 minutes")
	c, settled := releasing(s)
	if n, err := c.Pass(ctx); err != nil || n != 0 || *settled != 0 {
		t.Fatalf("first pass of a new store: got %d keys (%d settled), %v, want none within a grace of its start", n, *settled, err)
	}
	idem.SinceStart(s, 2*time.Minute)
	if n, err := c.Pass(ctx); err != nil || n != 1 || *settled != 1 {
		t.Fatalf("pass a grace after the start: got %d keys (%d settled), %v, want 1", n, *settled, err)
	}
}

// SettleKey settles one named key at once, however lately its client asked
// (a webhook, a shopper back from their bank): a held key is left to its
// holder (in progress), a stuck one is taken over and handed to the
// Settler, and a finished or unknown key is not found.
func TestSettleKey(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	var settled []string
	c := &idem.Completer{Store: s, Grace: time.Hour, // a Pass would leave every key alone
		Settler: idem.SettlerFunc(func(ctx context.Context, l *idem.Lock) (string, error) {
			settled = append(settled, l.Key)
			return "released", l.Release(ctx)
		})}
	claimLock(t, s, request("now", "a"))
	if _, err := c.SettleKey(ctx, "alice", "now"); !errors.Is(err, idem.ErrInProgress) {
		t.Fatalf("a held key: got %v, want in progress", err)
	}
	idemtest.ExpireLock(t, pool, "alice", "now")
	if n, err := c.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("a pass within the grace: got %d keys, %v, want none", n, err)
	}
	got, err := c.SettleKey(ctx, "alice", "now")
	if err != nil || got.Outcome != "released" || got.Lock == nil || !got.Lock.ByCompleter || len(settled) != 1 {
		t.Fatalf("a stuck key: got %+v, %v (settled %v), want it taken over and released", got, err, settled)
	}
	if _, err := c.SettleKey(ctx, "alice", "now"); !errors.Is(err, idem.ErrNotFound) {
		t.Fatalf("a key settled already: got %v, want not found", err)
	}
	lock := claimLock(t, s, request("done", "a"))
	if err := lock.Finish(ctx, idem.Response{Status: 201}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SettleKey(ctx, "alice", "done"); !errors.Is(err, idem.ErrNotFound) || len(settled) != 1 {
		t.Fatalf("a finished key: got %v (settled %v), want not found and nothing settled", err, settled)
	}
}

// A pass takes each key at most once: a Settler that ends the lease at once
// (to leave the key free for its client) does not see the key again in
// the same pass, which would ask its provider once per batch slot.
func TestAPassTakesAKeyOnce(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	claimLock(t, s, request("once", "a"))
	idemtest.ExpireLock(t, pool, "alice", "once")
	turns := 0
	c := &idem.Completer{Store: s, Grace: time.Nanosecond, Max: 10,
		Settler: idem.SettlerFunc(func(ctx context.Context, l *idem.Lock) (string, error) {
			turns++
			return "pending", errors.Join(errors.New("not yet"), l.Expire(ctx))
		})}
	if n, err := c.Pass(ctx); err != nil || n != 1 || turns != 1 {
		t.Fatalf("got %d keys, %d turns, %v, want the key once", n, turns, err)
	}
	if _, err := s.Get(ctx, "alice", "once"); !errors.Is(err, idem.ErrInProgress) {
		t.Fatalf("after the pass: got %v, want the key still started", err)
	}
}
