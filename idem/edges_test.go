package idem_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/idem/idemtest"
)

// What a caller of the kit is told at the edges: a replay is marked as one
// and a fresh answer is not; a click that waited for a submission that then
// failed gets an answer of its own; an answer that could not be stored is
// not sent; a key in progress names a short wait; an outage is
// ErrUnavailable.

// awaitingPool is a pool whose tracer closes awaiting the first time a
// statement reads a key's state for Await (the kit's GetKey), so that a
// test can hold the holder of a key until another request is waiting for it.
func awaitingPool(t *testing.T) (*pgxpool.Pool, <-chan struct{}) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(idemtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	awaiting := make(chan struct{})
	cfg.ConnConfig.Tracer = &getKeyTracer{once: &sync.Once{}, awaiting: awaiting}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, awaiting
}

type getKeyTracer struct {
	once     *sync.Once
	awaiting chan struct{}
}

func (g *getKeyTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.Contains(data.SQL, "-- name: GetKey") {
		g.once.Do(func() { close(g.awaiting) })
	}
	return ctx
}

func (g *getKeyTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func TestDoTellsAReplayFromAFreshAnswer(t *testing.T) {
	s, pool := newStore(t)
	createNotes(t, pool)
	first, err := s.Do(context.Background(), request("r1", "a"), time.Second, addNote)
	if err != nil || first.Replayed {
		t.Fatalf("first: got %+v, %v, want a fresh answer", first, err)
	}
	again, err := s.Do(context.Background(), request("r1", "a"), time.Second, addNote)
	if err != nil || !again.Replayed || again.Header["Location"] != first.Header["Location"] {
		t.Fatalf("again: got %+v, %v, want the first answer, replayed", again, err)
	}
}

// A double submit whose first submission fails (the work refuses it, or
// its client goes away before it writes) releases the key while the second
// waits for it. The second must not fail because the first did: it claims
// the key afresh and runs the work itself, getting the same refusal or an
// answer of its own. The first is held until the second is waiting.
func TestDoWaiterOfAFailedSubmissionRunsItItself(t *testing.T) {
	refused := errors.New("the name is blank")
	for _, tc := range []struct {
		name string
		// first is how the first submission fails; second what the
		// work answers when the waiting one runs it.
		first      func(cancel context.CancelFunc) error
		secondErr  error
		wantStatus int
	}{
		{"refused by the work", func(context.CancelFunc) error { return refused }, refused, 0},
		{"its client went away", func(cancel context.CancelFunc) error { cancel(); return context.Canceled }, nil, 303},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, awaiting := awaitingPool(t)
			s := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
			createNotes(t, pool)
			running := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			firstDone := make(chan error, 1)
			go func() {
				_, err := s.Do(ctx, request("w1", "a"), time.Second, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
					close(running)
					<-awaiting
					return idem.Response{}, tc.first(cancel)
				})
				firstDone <- err
			}()
			<-running
			var calls int
			o, err := s.Do(context.Background(), request("w1", "a"), 10*time.Second, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
				calls++
				if tc.secondErr != nil {
					return idem.Response{}, tc.secondErr
				}
				return addNote(ctx, tx)
			})
			if err := <-firstDone; err == nil {
				t.Fatal("the first submission succeeded; the test wants it to fail")
			}
			if calls != 1 {
				t.Fatalf("the waiting submission ran the work %d times, want once", calls)
			}
			if tc.secondErr != nil && !errors.Is(err, tc.secondErr) {
				t.Fatalf("the waiting submission: got %v, want the same refusal (%v)", err, tc.secondErr)
			}
			if tc.secondErr == nil && (err != nil || o.Status != tc.wantStatus || o.Replayed) {
				t.Fatalf("the waiting submission: got %+v, %v, want a fresh %d of its own", o, err, tc.wantStatus)
			}
			cancel()
		})
	}
}

// A 409 tells the client when asking again is useful: a second or so for a
// key that has just been claimed, never the length of a lease its holder
// keeps renewing.
func TestInProgressNamesAShortWait(t *testing.T) {
	ctx := context.Background()
	pool := idemtest.NewPool(t)
	s := idem.NewStore(pool, idem.Options{Lease: 30 * time.Second})
	claimLock(t, s, request("busy", "a"))
	for name, ask := range map[string]func() error{
		"claim": func() error { _, err := s.Claim(ctx, request("busy", "a")); return err },
		"get":   func() error { _, err := s.Get(ctx, "alice", "busy"); return err },
		"await": func() error {
			ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			_, err := s.Await(ctx, "alice", "busy")
			return err
		},
	} {
		var busy *idem.InProgressError
		if err := ask(); !errors.As(err, &busy) || busy.RetryAfter < time.Second || busy.RetryAfter > 5*time.Second {
			t.Errorf("%s of a key held for 30 s: got %v (%+v), want an *InProgressError with RetryAfter from 1 to 5 s", name, err, busy)
		}
	}
	// A key that has been in progress for a while still names at most 5 s.
	if _, err := pool.Exec(ctx, `UPDATE idem_keys SET created_at = now() - interval '20 seconds' WHERE key = 'busy'`); err != nil {
		t.Fatal(err)
	}
	var busy *idem.InProgressError
	if _, err := s.Claim(ctx, request("busy", "a")); !errors.As(err, &busy) || busy.RetryAfter != 5*time.Second {
		t.Errorf("a key in progress for 20 s: got %v (%+v), want RetryAfter 5 s", err, busy)
	}
}

// Every call to a database that does not answer fails with ErrUnavailable,
// which an API answers 503 with Retry-After, never 500.
func TestADatabaseThatDoesNotAnswerIsUnavailable(t *testing.T) {
	ctx := context.Background()
	// Nothing listens on port 1, so every connection is refused.
	pool, err := pgxpool.New(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s := idem.NewStore(pool, idem.Options{})
	for name, call := range map[string]func() error{
		"claim": func() error { _, err := s.Claim(ctx, request("k", "a")); return err },
		"get":   func() error { _, err := s.Get(ctx, "alice", "k"); return err },
		"do":    func() error { _, err := s.Do(ctx, request("k", "a"), time.Second, addNote); return err },
		"sweep": func() error { _, err := (&idem.Sweeper{Store: s, Keep: time.Hour}).Pass(ctx); return err },
		"complete": func() error {
			_, err := (&idem.Completer{Store: s, Settler: idem.SettlerFunc(func(context.Context, *idem.Lock) (string, error) { return "", nil })}).Pass(ctx)
			return err
		},
	} {
		if err := call(); !errors.Is(err, idem.ErrUnavailable) {
			t.Errorf("%s: got %v, want ErrUnavailable", name, err)
		}
	}
	// A deadline that runs out in the database is an outage too: the
	// statement's outcome is not known.
	live := idem.NewStore(idemtest.NewPool(t), idem.Options{})
	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	if _, err := live.Claim(expired, request("k", "a")); !errors.Is(err, idem.ErrUnavailable) {
		t.Errorf("claim past its deadline: got %v, want ErrUnavailable", err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := live.Claim(gone, request("k", "a")); errors.Is(err, idem.ErrUnavailable) {
		t.Errorf("claim of a client that went away: got %v, want not ErrUnavailable (the caller left)", err)
	}
}

// A client that goes away does not cut its work short: the browser drops the
// first request of a double click for the second, which then gets the
// first's answer instead of a key released under it.
func TestDoWorkOutlivesItsClient(t *testing.T) {
	s, pool := newStore(t)
	createNotes(t, pool)
	ctx, cancel := context.WithCancel(context.Background())
	o, err := s.Do(ctx, request("gone", "a"), time.Second, func(wctx context.Context, tx pgx.Tx) (idem.Response, error) {
		cancel() // the browser drops the request mid-work
		return addNote(wctx, tx)
	})
	if err != nil || o.Status != 303 {
		t.Fatalf("got %+v, %v, want the work done although its client left", o, err)
	}
	again, err := s.Do(context.Background(), request("gone", "a"), time.Second, addNote)
	if err != nil || !again.Replayed || again.Header["Location"] != o.Header["Location"] {
		t.Fatalf("the second click: got %+v, %v, want the first's answer replayed", again, err)
	}
	if n := countNotes(t, pool); n != 1 {
		t.Fatalf("got %d notes, want 1", n)
	}
}

// cancelOnClaim is a tracer that cancels a context the moment the kit's
// claim statement is sent: a browser dropping the first request of a double
// click just then.
type cancelOnClaim struct{ cancel context.CancelFunc }

func (c *cancelOnClaim) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.Contains(data.SQL, "-- name: Claim :one") {
		c.cancel()
	}
	return ctx
}

func (c *cancelOnClaim) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A claim is not cut short by a client that goes away while it is in
// flight: cut short, it may have inserted the key all the same, which would
// then sit started with nobody at work under it, and every later submit of
// the form would wait for it until its lease ran out.
func TestDoClaimOutlivesItsClient(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(idemtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cfg.ConnConfig.Tracer = &cancelOnClaim{cancel: cancel}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	createNotes(t, pool)
	s := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	o, err := s.Do(ctx, request("dropped", "a"), time.Second, addNote)
	if err != nil || o.Status != 303 {
		t.Fatalf("got %+v, %v, want the work done although its client left during the claim", o, err)
	}
	if n := countNotes(t, pool); n != 1 {
		t.Fatalf("got %d notes, want 1", n)
	}
}
