package idem_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"exactlyonce/idem"
	"exactlyonce/idem/idemtest"
)

// mapAnswers is the smallest idem.Answers: an unbounded map. The shop uses
// an expiring LRU cache; the rule under test is the store's, not the cache's.
type mapAnswers struct {
	mu sync.Mutex
	m  map[string]idem.Answer
}

func (a *mapAnswers) Get(key string) (idem.Answer, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.m[key]
	return v, ok
}

func (a *mapAnswers) Add(key string, v idem.Answer) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.m[key] = v
	return false
}

// TestAnswersAreRememberedOnceFinished shows what a store with Answers
// answers from memory and what it still asks the database. To tell the two
// apart, the test deletes the key's row behind the store's back, as the
// sweeper would: an answer from memory survives that, one from the database
// does not.
func TestAnswersAreRememberedOnceFinished(t *testing.T) {
	ctx := context.Background()
	pool := idemtest.NewPool(t)
	memory := &mapAnswers{m: map[string]idem.Answer{}}
	s := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second, Answers: memory, AnswersFor: time.Minute, Retention: time.Hour})
	forget := func(t *testing.T, scope, key string) {
		t.Helper()
		if _, err := pool.Exec(ctx, "DELETE FROM idem_keys WHERE scope = $1 AND key = $2", scope, key); err != nil {
			t.Fatal(err)
		}
	}

	l := claimLock(t, s, request("done", "a"))
	if _, err := s.Claim(ctx, request("done", "a")); !errors.Is(err, idem.ErrInProgress) {
		t.Fatalf("claim of a started key: got %v, want ErrInProgress", err)
	}
	if len(memory.m) != 0 {
		t.Fatalf("a started key was remembered: %v", memory.m)
	}
	want := idem.Response{Status: 201, Body: []byte(`{"id":7}`)}
	if err := l.Finish(ctx, want); err != nil {
		t.Fatal(err)
	}
	// The first replay reads the row and remembers it.
	if c, err := s.Claim(ctx, request("done", "a")); err != nil || c.Replay == nil {
		t.Fatalf("first replay: got %+v, %v", c, err)
	}
	forget(t, "alice", "done")

	t.Run("a replay is answered from memory", func(t *testing.T) {
		c, err := s.Claim(ctx, request("done", "a"))
		if err != nil || c.Replay == nil || string(c.Replay.Body) != `{"id":7}` || c.Replay.Status != 201 {
			t.Fatalf("got %+v, %v, want the remembered replay", c, err)
		}
		c, ok, err := s.Recall(request("done", "a"))
		if !ok || err != nil || c.Replay == nil {
			t.Fatalf("Recall: got %+v, %v, %v", c, ok, err)
		}
	})
	t.Run("another fingerprint is refused from memory", func(t *testing.T) {
		if _, err := s.Claim(ctx, request("done", "b")); !errors.Is(err, idem.ErrMismatch) {
			t.Fatalf("got %v, want ErrMismatch", err)
		}
	})
	t.Run("another scope's key of the same name is not", func(t *testing.T) {
		r := request("done", "a")
		r.Scope = "bob"
		if _, ok, _ := s.Recall(r); ok {
			t.Fatal("bob recalled alice's answer")
		}
		c, err := s.Claim(ctx, r)
		if err != nil || c.Lock == nil {
			t.Fatalf("bob's claim: got %+v, %v, want a lock of his own", c, err)
		}
	})
	t.Run("a store without Answers asks the database", func(t *testing.T) {
		plain := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second})
		c, err := plain.Claim(ctx, request("done", "a"))
		if err != nil || c.Lock == nil {
			t.Fatalf("got %+v, %v, want a new claim of the forgotten key", c, err)
		}
	})
}

// TestAnswersNeverOutliveTheirRows replays a key late in its life, when the
// sweeper may delete its row before a remembered entry would expire: the
// store must not remember it, or the same key used again after the sweep (a
// new operation) would be answered with the old one's answer from memory.
func TestAnswersNeverOutliveTheirRows(t *testing.T) {
	ctx := context.Background()
	pool := idemtest.NewPool(t)
	memory := &mapAnswers{m: map[string]idem.Answer{}}
	s := idem.NewStore(pool, idem.Options{Lease: 3 * time.Second, Answers: memory, AnswersFor: time.Minute, Retention: time.Hour})
	l := claimLock(t, s, request("late", "a"))
	if err := l.Finish(ctx, idem.Response{Status: 201, Body: []byte(`{"id":1}`)}); err != nil {
		t.Fatal(err)
	}
	// 59 min 30 s old: under the retention, but its entry would live a
	// minute, past the sweep.
	if _, err := pool.Exec(ctx, `UPDATE idem_keys SET created_at = now() - interval '59 minutes 30 seconds',
		finished_at = now() - interval '59 minutes 30 seconds' WHERE key = 'late'`); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Claim(ctx, request("late", "a")); err != nil || c.Replay == nil {
		t.Fatalf("replay: got %+v, %v, want the stored answer", c, err)
	}
	if len(memory.m) != 0 {
		t.Fatalf("remembered a key whose row the sweeper may delete before the entry expires: %v", memory.m)
	}
	sweeper := &idem.Sweeper{Store: s, Keep: 59 * time.Minute}
	if res, err := sweeper.Pass(ctx); err != nil || res.Keys != 1 {
		t.Fatalf("sweep: got %+v, %v, want the key deleted", res, err)
	}
	c, err := s.Claim(ctx, request("late", "b"))
	if err != nil || c.Lock == nil {
		t.Fatalf("the key used again after its sweep: got %+v, %v, want a new operation", c, err)
	}
}
