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

func newStore(tb testing.TB) (*idem.Store, *pgxpool.Pool) {
	tb.Helper()
	pool := idemtest.NewPool(tb)
	s := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
	idem.SinceStart(s, time.Hour) // a process that has run a while; TestNewStoreHoldsItsCompleterOff tests a new one
	return s, pool
}

func request(key, body string) idem.Request {
	return idem.Request{Scope: "alice", Key: key, Fingerprint: idem.Fingerprint([]byte(body))}
}

func claimLock(tb testing.TB, s *idem.Store, r idem.Request) *idem.Lock {
	tb.Helper()
	c, err := s.Claim(context.Background(), r)
	if err != nil || c.Lock == nil {
		tb.Fatalf("claim %q: got %+v, %v, want a lock", r.Key, c, err)
	}
	return c.Lock
}

func TestClaim(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)

	t.Run("a finished key replays its answer", func(t *testing.T) {
		l := claimLock(t, s, request("k1", "a"))
		want := idem.Response{Status: 201, Header: map[string]string{"Location": "/x/1"}, Body: []byte(`{"id":1}`)}
		if err := l.Finish(ctx, want); err != nil {
			t.Fatalf("finish: %v", err)
		}
		c, err := s.Claim(ctx, request("k1", "a"))
		if err != nil || c.Replay == nil {
			t.Fatalf("claim again: got %+v, %v, want a replay", c, err)
		}
		if c.Replay.Status != 201 || string(c.Replay.Body) != `{"id":1}` || c.Replay.Header["Location"] != "/x/1" {
			t.Fatalf("got replay %+v, want %+v", *c.Replay, want)
		}
	})

	t.Run("a key reused with another request is refused", func(t *testing.T) {
		claimLock(t, s, request("k2", "a"))
		if _, err := s.Claim(ctx, request("k2", "b")); !errors.Is(err, idem.ErrMismatch) {
			t.Fatalf("got %v, want ErrMismatch", err)
		}
	})

	t.Run("a held key is in progress", func(t *testing.T) {
		claimLock(t, s, request("k3", "a"))
		if _, err := s.Claim(ctx, request("k3", "a")); !errors.Is(err, idem.ErrInProgress) {
			t.Fatalf("got %v, want ErrInProgress", err)
		}
	})

	t.Run("keys are scoped to their owner", func(t *testing.T) {
		claimLock(t, s, request("k4", "a"))
		other := request("k4", "a")
		other.Scope = "bob"
		claimLock(t, s, other)
	})

	t.Run("an expired key is taken over and the stale holder loses", func(t *testing.T) {
		first := claimLock(t, s, request("k5", "a"))
		idemtest.ExpireLock(t, pool, "alice", "k5")
		second := claimLock(t, s, request("k5", "a"))
		if !second.TakenOver || second.OperationID != first.OperationID || second.Token == first.Token {
			t.Fatalf("got takeover %+v of %+v, want the same operation under a new token", second, first)
		}
		if err := first.Finish(ctx, idem.Response{Status: 200}); !errors.Is(err, idem.ErrLockLost) {
			t.Fatalf("stale finish: got %v, want ErrLockLost", err)
		}
		if err := first.Heartbeat(ctx); !errors.Is(err, idem.ErrLockLost) {
			t.Fatalf("stale heartbeat: got %v, want ErrLockLost", err)
		}
		if err := second.Finish(ctx, idem.Response{Status: 200, Body: []byte("second")}); err != nil {
			t.Fatalf("current finish: %v", err)
		}
		if got, _ := s.Get(ctx, "alice", "k5"); string(got.Body) != "second" {
			t.Fatalf("got answer %q, want the current holder's", got.Body)
		}
	})

	t.Run("a released key starts afresh", func(t *testing.T) {
		first := claimLock(t, s, request("k6", "a"))
		if err := first.Release(ctx); err != nil {
			t.Fatalf("release: %v", err)
		}
		if second := claimLock(t, s, request("k6", "b")); second.TakenOver {
			t.Fatal("got a takeover, want a new key")
		}
	})
}

func TestKeepFencesItself(t *testing.T) {
	s, pool := newStore(t)
	l := claimLock(t, s, request("k", "a"))
	held, stop := l.Keep(context.Background())
	defer stop()
	idemtest.ExpireLock(t, pool, "alice", "k")
	claimLock(t, s, request("k", "a"))
	select {
	case <-held.Done():
		if cause := context.Cause(held); !errors.Is(cause, idem.ErrLockLost) {
			t.Fatalf("got cause %v, want ErrLockLost", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the lease keeper did not notice the takeover")
	}
}

func TestAwait(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)

	t.Run("returns the holder's answer once it finishes", func(t *testing.T) {
		l := claimLock(t, s, request("a1", "a"))
		got := make(chan idem.Response, 1)
		go func() {
			resp, err := s.Await(ctx, "alice", "a1")
			if err != nil {
				t.Errorf("await: %v", err)
			}
			got <- resp
		}()
		if err := l.Finish(ctx, idem.Response{Status: 200, Body: []byte("done")}); err != nil {
			t.Fatalf("finish: %v", err)
		}
		if resp := <-got; string(resp.Body) != "done" {
			t.Fatalf("got %q, want done", resp.Body)
		}
	})

	t.Run("gives up when its context ends", func(t *testing.T) {
		claimLock(t, s, request("a2", "a"))
		wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := s.Await(wctx, "alice", "a2"); !errors.Is(err, idem.ErrInProgress) {
			t.Fatalf("got %v, want ErrInProgress", err)
		}
	})

	t.Run("reports a released key", func(t *testing.T) {
		l := claimLock(t, s, request("a3", "a"))
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Await(ctx, "alice", "a3"); !errors.Is(err, idem.ErrNotFound) {
			t.Fatalf("got %v, want ErrNotFound", err)
		}
	})
}
