package hapg

import (
	"context"
	"testing"
	"time"
)

// TestStartReusesAFormation stops every process of a formation, as a
// reboot would, and checks that Start finds it again: its data kept, and
// Sync, which differs this time, applied.
func TestStartReusesAFormation(t *testing.T) {
	ctx := t.Context()
	f := startFormation(t, Options{Sync: false, Fast: true})
	if _, err := mustPool(t, f.URL("postgres")).Exec(ctx, "CREATE TABLE kept ()"); err != nil {
		t.Fatal(err)
	}
	if err := f.Monitor().StopNode(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes() {
		if err := n.StopNode(ctx); err != nil {
			t.Fatal(err)
		}
	}

	opts := f.opts
	opts.Sync = true
	began := time.Now()
	again, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Not deleted by this Stop, which did not create it; startFormation's
	// does.
	t.Cleanup(func() { again.Stop(context.Background()) })
	t.Logf("formation restarted in %s", time.Since(began).Round(time.Millisecond))

	pool := mustPool(t, again.URL("postgres"))
	var tables int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'kept'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 1 {
		t.Errorf("got %d tables named kept, want 1", tables)
	}
	var names string
	if err := pool.QueryRow(ctx, "SHOW synchronous_standby_names").Scan(&names); err != nil {
		t.Fatal(err)
	}
	if names == "" {
		t.Error("got no synchronous_standby_names on the primary, want the standby in the quorum")
	}
	states, err := again.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if !s.Quorum {
			t.Errorf("%s: got replication-quorum false, want true", s.Name)
		}
	}
}
