package idem_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
	"exactlyonce/idem/idemtest"
)

func createNotes(tb testing.TB, pool *pgxpool.Pool) {
	tb.Helper()
	if _, err := pool.Exec(context.Background(), `CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)`); err != nil {
		tb.Fatal(err)
	}
}

func countNotes(tb testing.TB, pool *pgxpool.Pool) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM notes`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

func addNote(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
	var id int
	if err := tx.QueryRow(ctx, `INSERT INTO notes (body) VALUES ('x') RETURNING id`).Scan(&id); err != nil {
		return idem.Response{}, err
	}
	return idem.Response{Status: 303, Header: map[string]string{"Location": fmt.Sprintf("/notes/%d", id)}}, nil
}

func TestDoRunsWorkOncePerKey(t *testing.T) {
	s, pool := newStore(t)
	createNotes(t, pool)
	var wg sync.WaitGroup
	answers := make([]string, 8)
	for i := range answers {
		wg.Go(func() {
			resp, err := s.Do(context.Background(), request("d1", "a"), 5*time.Second, addNote)
			if err != nil {
				t.Errorf("do: %v", err)
			}
			answers[i] = resp.Header["Location"]
		})
	}
	wg.Wait()
	if got := countNotes(t, pool); got != 1 {
		t.Fatalf("got %d notes, want 1", got)
	}
	for _, a := range answers {
		if a != answers[0] || a == "" {
			t.Fatalf("got answers %q, want one Location for all", answers)
		}
	}
}

func TestDoReleasesTheKeyWhenWorkFails(t *testing.T) {
	s, pool := newStore(t)
	createNotes(t, pool)
	boom := errors.New("boom")
	_, err := s.Do(context.Background(), request("d2", "a"), time.Second, func(ctx context.Context, tx pgx.Tx) (idem.Response, error) {
		if _, err := addNote(ctx, tx); err != nil {
			return idem.Response{}, err
		}
		return idem.Response{}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	if got := countNotes(t, pool); got != 0 {
		t.Fatalf("got %d notes after a failed attempt, want 0 (rolled back)", got)
	}
	if _, err := s.Do(context.Background(), request("d2", "a"), time.Second, addNote); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := countNotes(t, pool); got != 1 {
		t.Fatalf("got %d notes after the retry, want 1", got)
	}
}

// A stale attempt's write rolls back with its finish: the caller's write
// and the answer land together or not at all.
func TestFinishTxRollsBackAStaleWrite(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	createNotes(t, pool)
	stale := claimLock(t, s, request("d3", "a"))
	idemtest.ExpireLock(t, pool, "alice", "d3")
	claimLock(t, s, request("d3", "a"))
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		resp, err := addNote(ctx, tx)
		if err != nil {
			return err
		}
		return stale.FinishTx(ctx, tx, resp)
	})
	if !errors.Is(err, idem.ErrLockLost) {
		t.Fatalf("got %v, want ErrLockLost", err)
	}
	if got := countNotes(t, pool); got != 0 {
		t.Fatalf("got %d notes, want 0", got)
	}
}

func TestCompleterSettlesStuckKeys(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	createNotes(t, pool)
	r := request("c1", "a")
	r.Payload = []byte(`{"body":"x"}`)
	claimLock(t, s, r)
	idemtest.ExpireLock(t, pool, "alice", "c1")
	var settled []string
	c := &idem.Completer{Store: s, Settler: idem.SettlerFunc(func(ctx context.Context, l *idem.Lock) (string, error) {
		settled = append(settled, l.Key+" "+string(l.Payload))
		return "finished", pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			resp, err := addNote(ctx, tx)
			if err != nil {
				return err
			}
			return l.FinishTx(ctx, tx, resp)
		})
	})}
	n, err := c.Pass(ctx)
	if err != nil || n != 1 {
		t.Fatalf("pass: got %d, %v, want 1, nil", n, err)
	}
	if len(settled) != 1 || settled[0] != `c1 {"body": "x"}` {
		t.Fatalf("got settled %q, want c1 with its payload", settled)
	}
	if _, err := s.Get(ctx, "alice", "c1"); err != nil {
		t.Fatalf("get after settling: %v", err)
	}
	if n, err := c.Pass(ctx); n != 0 || err != nil {
		t.Fatalf("second pass: got %d, %v, want nothing to do", n, err)
	}
}

// Around runs each key's turn: the Settler and Observe see the context it
// hands them (a tracing span's, in the shop), and nothing runs outside it.
func TestCompleterRunsEachKeyAround(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	for _, k := range []string{"c1", "c2"} {
		claimLock(t, s, request(k, "a"))
		idemtest.ExpireLock(t, pool, "alice", k)
	}
	type turnKey struct{}
	var around, settled, observed []string
	c := &idem.Completer{Store: s,
		Settler: idem.SettlerFunc(func(ctx context.Context, l *idem.Lock) (string, error) {
			settled = append(settled, fmt.Sprint(ctx.Value(turnKey{})))
			return "released", l.Release(ctx)
		}),
		Observe: func(ctx context.Context, st idem.Settled) {
			observed = append(observed, fmt.Sprint(ctx.Value(turnKey{}))+" "+st.Outcome)
		},
		Around: func(ctx context.Context, l *idem.Lock, turn func(context.Context)) {
			around = append(around, l.Key)
			turn(context.WithValue(ctx, turnKey{}, "turn of "+l.Key))
		},
	}
	if n, err := c.Pass(ctx); err != nil || n != 2 {
		t.Fatalf("pass: got %d, %v, want 2, nil", n, err)
	}
	if got, want := fmt.Sprint(around), "[c1 c2]"; got != want {
		t.Errorf("Around ran for %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(settled), "[turn of c1 turn of c2]"; got != want {
		t.Errorf("the Settler saw %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(observed), "[turn of c1 released turn of c2 released]"; got != want {
		t.Errorf("Observe saw %s, want %s", got, want)
	}
}

func TestSweeperDeletesOldAnswersOnly(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	for _, k := range []string{"old", "new"} {
		if err := claimLock(t, s, request(k, "a")).Finish(ctx, idem.Response{Status: 200}); err != nil {
			t.Fatal(err)
		}
	}
	claimLock(t, s, request("started", "a"))
	idemtest.AgeAnswer(t, pool, "alice", "old", "2 hours")
	n, err := (&idem.Sweeper{Store: s, Keep: time.Hour, Batch: 1}).Pass(ctx)
	if err != nil || n.Keys != 1 {
		t.Fatalf("got %+v swept, %v, want 1", n, err)
	}
	if _, err := s.Get(ctx, "alice", "old"); !errors.Is(err, idem.ErrNotFound) {
		t.Fatalf("old answer: got %v, want ErrNotFound", err)
	}
	if _, err := s.Get(ctx, "alice", "new"); err != nil {
		t.Fatalf("new answer: %v", err)
	}
}

// Flows that share the table keep to their own keys: a completer or sweeper
// of one kind never settles or deletes a key of another, whose Settler
// would not know what it protects.
func TestCompleterAndSweeperTakeOnlyTheirKind(t *testing.T) {
	ctx := context.Background()
	pool := idemtest.NewPool(t)
	orders := idem.NewStore(pool, idem.Options{Kind: "order", Lease: 3 * time.Second})
	forms := idem.NewStore(pool, idem.Options{Kind: "form", Lease: 3 * time.Second})
	claimLock(t, orders, request("stuck", "a"))
	idemtest.ExpireLock(t, pool, "alice", "stuck")
	if err := claimLock(t, orders, request("done", "a")).Finish(ctx, idem.Response{Status: 201}); err != nil {
		t.Fatal(err)
	}
	idemtest.AgeAnswer(t, pool, "alice", "done", "2 hours")

	release := idem.SettlerFunc(func(ctx context.Context, l *idem.Lock) (string, error) { return "released", l.Release(ctx) })
	if n, err := (&idem.Completer{Store: forms, Settler: release}).Pass(ctx); n != 0 || err != nil {
		t.Errorf("other kind's completer: got %d, %v, want nothing taken", n, err)
	}
	if res, err := (&idem.Sweeper{Store: forms, Keep: time.Hour}).Pass(ctx); res.Keys != 0 || err != nil {
		t.Errorf("other kind's sweeper: got %+v, %v, want nothing deleted", res, err)
	}
	if n, err := (&idem.Completer{Store: orders, Settler: release}).Pass(ctx); n != 1 || err != nil {
		t.Errorf("own completer: got %d, %v, want the stuck key", n, err)
	}
	if res, err := (&idem.Sweeper{Store: orders, Keep: time.Hour}).Pass(ctx); res.Keys != 1 || err != nil {
		t.Errorf("own sweeper: got %+v, %v, want the old answer", res, err)
	}
}

// A yielding sweeper still sweeps everything, batch after batch.
func TestYieldingSweeperSweepsEveryBatch(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	for _, k := range []string{"a", "b", "c"} {
		if err := claimLock(t, s, request(k, "x")).Finish(ctx, idem.Response{Status: 200}); err != nil {
			t.Fatal(err)
		}
		idemtest.AgeAnswer(t, pool, "alice", k, "2 hours")
	}
	res, err := (&idem.Sweeper{Store: s, Keep: time.Hour, Batch: 1, Yield: 1}).Pass(ctx)
	if err != nil || res.Keys != 3 || res.Batches != 4 {
		t.Fatalf("got %+v, %v, want 3 keys in 4 batches (the last one empty)", res, err)
	}
}
