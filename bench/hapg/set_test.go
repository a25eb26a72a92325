package hapg

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSetOutlastsAMonitorDeadlock makes the monitor break a deadlock by
// failing pg_autoctl set, as a keeper's node_active once did in CI (it locks
// its node's row, then the formation; a set locks the formation, then the
// row): this test's transaction locks node1's row, waits until the set
// waits for that row, then asks for the formation's lock. The test's side
// checks for deadlocks late, so the set's side is the one failed; the set
// must then be tried again, and succeed once the row is free.
func TestSetOutlastsAMonitorDeadlock(t *testing.T) {
	ctx := t.Context()
	f := startFormation(t, Options{Sync: false, Fast: true})
	said := &saidTo{Writer: f.opts.Log}
	f.logMu.Lock()
	f.opts.Log = said
	f.logMu.Unlock()
	n1, err := f.node("node1")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after the commit
	// This side checks for deadlocks late, so that the set's side, which
	// checks after the default second, is the one failed.
	for _, sql := range []string{
		"SET LOCAL deadlock_timeout = '20s'",
		"UPDATE pgautofailover.node SET nodename = nodename WHERE nodename = 'node1'",
	} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}

	set := make(chan error, 1)
	go func() { set <- n1.set(ctx, "node", "replication-quorum", "--pgdata", n1.pgdata(), "true") }()

	// The set waits for a lock: for the row this transaction holds, or
	// for the formation, held by a keeper whose node_active waits for that
	// row. Either way, asking for the formation makes a cycle.
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		var waiting bool
		err := f.pool.QueryRow(waitCtx, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE query LIKE '%set_node_replication_quorum%' AND wait_event_type = 'Lock' AND pid <> pg_backend_pid())`).Scan(&waiting)
		if err != nil {
			t.Fatalf("wait for pg_autoctl set to wait for node1's row: %v", err)
		}
		if waiting {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The formation's lock, held by the set: a cycle. This call's own
	// change is rolled back below.
	if _, err := tx.Exec(ctx, "SELECT pgautofailover.set_node_replication_quorum('default', 'node2', true)"); err != nil {
		t.Fatalf("the test's side of the deadlock failed, not the set's: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	select {
	case err := <-set:
		if err != nil {
			t.Fatalf("pg_autoctl set after the monitor broke the deadlock: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("pg_autoctl set did not end within a minute")
	}
	if !strings.Contains(said.String(), "broke a deadlock") {
		t.Errorf("the set was not tried again after a deadlock; the formation said:\n%s", said.String())
	}
	states, err := f.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.Name == "node1" && !s.Quorum {
			t.Error("node1: got replication-quorum false after the set, want true")
		}
		if s.Name == "node2" && s.Quorum {
			t.Error("node2: got replication-quorum true, want the test's change rolled back")
		}
	}
}

// saidTo is a formation log that also keeps what it was told.
type saidTo struct {
	io.Writer
	mu   sync.Mutex
	said strings.Builder
}

func (s *saidTo) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.said.Write(p)
	s.mu.Unlock()
	return s.Writer.Write(p)
}

func (s *saidTo) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.said.String()
}
