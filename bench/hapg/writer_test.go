package hapg

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// writer inserts rows of increasing id through a URL, one at a time, and
// records the ids whose commit was acknowledged. An insert that fails is
// not acknowledged, whatever became of it; the writer goes on with the
// next id.
type writer struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	acked    []int64
	failures int
	lastErr  error
}

const ackedTable = "CREATE TABLE IF NOT EXISTS acked (id bigint PRIMARY KEY)"

// createAckedTable creates the writer's table on f and waits until the
// standby has it too: asynchronous, it could otherwise be part of the tail
// a test loses, and the writer would find no table on the new primary.
func createAckedTable(tb testing.TB, f *Formation) {
	tb.Helper()
	ctx := tb.Context()
	if _, err := mustPool(tb, f.URL("postgres")).Exec(ctx, ackedTable); err != nil {
		tb.Fatal(err)
	}
	p, err := f.Primary(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	standby := mustPool(tb, f.Other(p).URL("postgres"))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var ok bool
		if err := standby.QueryRow(ctx, "SELECT to_regclass('acked') IS NOT NULL").Scan(&ok); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatal("the standby has no table acked after 30s")
		}
	}
}

func startWriter(tb testing.TB, url string) *writer {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := pool.Exec(ctx, ackedTable); err != nil {
		tb.Fatal(err)
	}
	w := &writer{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer pool.Close()
		for id := int64(1); ctx.Err() == nil; id++ {
			insertCtx, cancelInsert := context.WithTimeout(ctx, 5*time.Second)
			_, err := pool.Exec(insertCtx, "INSERT INTO acked (id) VALUES ($1)", id)
			cancelInsert()
			w.mu.Lock()
			if err == nil {
				w.acked = append(w.acked, id)
			} else {
				w.failures++
				w.lastErr = err
			}
			w.mu.Unlock()
			if err != nil {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	tb.Cleanup(w.stop)
	return w
}

// stop stops the writer.
func (w *writer) stop() {
	w.cancel()
	<-w.done
}

func (w *writer) failureCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failures
}

func (w *writer) ackedIDs() []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.acked)
}

// waitAcks waits until n more commits have been acknowledged.
func (w *writer) waitAcks(tb testing.TB, n int) {
	tb.Helper()
	start := len(w.ackedIDs())
	deadline := time.Now().Add(30 * time.Second)
	for len(w.ackedIDs()) < start+n {
		if time.Now().After(deadline) {
			w.mu.Lock()
			defer w.mu.Unlock()
			tb.Fatalf("writer: %d acknowledged commits in 30s, want %d (last error: %v)", len(w.acked)-start, n, w.lastErr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// missing returns the acknowledged ids that the table lacks on node n.
func missing(tb testing.TB, n *Node, acked []int64) []int64 {
	tb.Helper()
	ctx := tb.Context()
	pool, err := pgxpool.New(ctx, n.URL("postgres"))
	if err != nil {
		tb.Fatal(err)
	}
	defer pool.Close()
	var lost []int64
	if err := pool.QueryRow(ctx, `
		SELECT coalesce(array_agg(a.id ORDER BY a.id), '{}')
		  FROM unnest($1::bigint[]) AS a(id)
		 WHERE NOT EXISTS (SELECT FROM acked WHERE acked.id = a.id)`, acked).Scan(&lost); err != nil {
		tb.Fatal(err)
	}
	return lost
}
