package hapg

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestTwoStandbysKeepThePrimarySynchronousWhenOneStops creates a formation
// of three data nodes (Options.Standbys 2) and stops one standby: the
// primary stays primary, keeps naming synchronous standbys, and a commit
// still waits for, and gets, the other standby's confirmation. With one
// standby the monitor would empty synchronous_standby_names here
// (wait_primary), and the primary would commit alone. It takes a minute
// or more (three nodes to create), so it runs only with HAPG_STANDBYS=2
// set, and not with -short.
func TestTwoStandbysKeepThePrimarySynchronousWhenOneStops(t *testing.T) {
	if testing.Short() || os.Getenv("HAPG_STANDBYS") != "2" {
		t.Skip("creates a formation of three data nodes: set HAPG_STANDBYS=2 to run it")
	}
	ctx := t.Context()
	f := startFormation(t, Options{Sync: true, Fast: true, Standbys: 2})
	if got := len(f.Nodes()); got != 3 {
		t.Fatalf("got %d data nodes, want 3", got)
	}
	var nss int
	if err := f.pool.QueryRow(ctx, "SELECT number_sync_standbys FROM pgautofailover.formation WHERE formationid = $1",
		formationName).Scan(&nss); err != nil {
		t.Fatal(err)
	}
	if nss != 1 {
		t.Errorf("got number_sync_standbys %d, want 1", nss)
	}
	primary, err := f.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pool := mustPool(t, primary.URL("postgres"))
	names := func() string {
		t.Helper()
		var s string
		if err := pool.QueryRow(ctx, "SHOW synchronous_standby_names").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := names()
	t.Logf("synchronous_standby_names %q", before)
	if !strings.HasPrefix(before, "ANY 1 (") || strings.Count(before, "pgautofailover_standby_") != 2 {
		t.Errorf("got synchronous_standby_names %q, want ANY 1 of both standbys", before)
	}

	stopped := f.Others(primary)[0]
	began := time.Now()
	if err := stopped.StopNode(ctx); err != nil {
		t.Fatal(err)
	}
	// The monitor takes the stopped standby for failed within seconds
	// (Fast); with one standby, that is when it empties the names.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		states, err := f.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		failed := false
		for _, s := range states {
			if s.Name == stopped.name && (!s.Healthy || !s.Running) {
				failed = true
			}
		}
		if failed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the monitor still has %s healthy a minute after it stopped: %s", stopped, describe(states))
		}
	}
	// Time for the monitor to assign, and the keeper to apply, whatever
	// follows from it.
	time.Sleep(5 * time.Second)
	t.Logf("%s stopped %s ago", stopped, time.Since(began).Round(time.Millisecond))
	states, err := f.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.Name == primary.name && (s.Reported != "primary" || s.Assigned != "primary") {
			t.Errorf("with one standby of two stopped, the primary is %s/%s, want primary/primary", s.Reported, s.Assigned)
		}
	}
	if after := names(); after == "" {
		t.Error("with one standby of two stopped, synchronous_standby_names is empty: the primary commits alone")
	}
	var confirming int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum')").
		Scan(&confirming); err != nil {
		t.Fatal(err)
	}
	if confirming != 1 {
		t.Errorf("got %d streaming synchronous standbys, want the one left", confirming)
	}
	// A commit waits for a standby's flush: it finishes, within
	// probeTimeout, only because the other standby confirms it.
	if err := acceptsWrites(ctx, primary); err != nil {
		t.Errorf("a commit with one standby of two stopped: %v", err)
	}

	if err := stopped.StartNode(ctx); err != nil {
		t.Fatal(err)
	}
	stable, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := f.WaitStable(stable); err != nil {
		t.Fatal(err)
	}
}
