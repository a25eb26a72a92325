package hapg

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestAsynchronousFormationLosesTheTail is LoseTail's counterexample: with
// the standby out of the replication quorum, the commits the primary
// acknowledged while the standby's WAL receiver was paused are missing on
// the standby it promotes. The loss is one run of consecutive commits, the
// last the old primary acknowledged; after the old primary rejoins, rewound,
// it lacks them too.
func TestAsynchronousFormationLosesTheTail(t *testing.T) {
	ctx := t.Context()
	f := startFormation(t, Options{Sync: false, Fast: true})
	createAckedTable(t, f)
	w := startWriter(t, f.URL("postgres"))
	w.waitAcks(t, 20)

	old, err := f.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	next, err := f.LoseTail(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if next == old {
		t.Fatalf("got %s as primary, want the standby promoted", next)
	}
	t.Logf("%s took writes %s after LoseTail began", next, time.Since(began).Round(time.Millisecond))
	w.waitAcks(t, 20)
	w.stop()

	acked := w.ackedIDs()
	lost := missing(t, next, acked)
	if len(lost) == 0 {
		t.Fatalf("no acknowledged commit lost of %d, want the last second's", len(acked))
	}
	i := slices.Index(acked, lost[0])
	if i < 0 || !slices.Equal(acked[i:i+len(lost)], lost) {
		t.Errorf("lost %v, want consecutive acknowledged commits", lost)
	}
	t.Logf("%d of %d acknowledged commits lost, ids %d to %d", len(lost), len(acked), lost[0], lost[len(lost)-1])

	if err := old.StartNode(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitStable(ctx); err != nil {
		t.Fatal(err)
	}
	if got := missing(t, old, lost); len(got) != len(lost) {
		t.Errorf("rejoined old primary has %d of the lost commits, want none (pg_rewind discards them)", len(lost)-len(got))
	}
}

// TestFarBehindStandbyIsPromoted checks that the monitor promotes an
// asynchronous standby more than pg_auto_failover's default
// promote_wal_log_threshold (16 MB) behind its dead primary, as it must for
// LoseTail to fail over whatever the lag, and for any standby that
// restarted: until it streams again, it reports the start of its WAL
// segment, up to 16 MB behind where it is. With the default threshold the
// monitor never promotes it and the test fails (tried).
func TestFarBehindStandbyIsPromoted(t *testing.T) {
	ctx := t.Context()
	f := startFormation(t, Options{Sync: false, Fast: true})
	primary, err := f.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	standby := f.Other(primary)
	if _, err := standby.PauseWALReceiver(); err != nil {
		t.Fatal(err)
	}
	pool := mustPool(t, primary.URL("postgres"))
	if _, err := pool.Exec(ctx, "CREATE TABLE filler AS SELECT repeat(md5(i::text), 30) AS x FROM generate_series(1, 24000) AS i"); err != nil {
		t.Fatal(err)
	}
	var behind int64
	if err := pool.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn() - replay_lsn FROM pg_stat_replication").Scan(&behind); err != nil {
		t.Fatal(err)
	}
	// The keeper reports its primary's LSN every second.
	time.Sleep(2 * time.Second)
	if err := primary.KillNode(); err != nil {
		t.Fatal(err)
	}
	if err := standby.KillWALReceiver(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := f.waitNewPrimary(wait, primary); err != nil {
		t.Fatalf("standby %d MB behind: %v", behind>>20, err)
	}
	t.Logf("standby %d MB behind promoted in %s", behind>>20, time.Since(began).Round(time.Millisecond))
}
