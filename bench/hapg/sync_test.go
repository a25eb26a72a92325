package hapg

import (
	"testing"
	"time"
)

// TestSynchronousFormationKeepsEveryAcknowledgedCommit writes through the
// multi-host URL while the formation suffers each disruption in turn, and
// checks that the primary at the end has every commit that was
// acknowledged. It also logs how long each disruption kept writes away.
func TestSynchronousFormationKeepsEveryAcknowledgedCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("about a minute of failovers")
	}
	ctx := t.Context()
	f := startFormation(t, Options{Sync: true, Fast: true})
	w := startWriter(t, f.URL("postgres"))
	w.waitAcks(t, 20)

	primary := func() *Node {
		t.Helper()
		p, err := f.Primary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	stable := func(step string, began time.Time) {
		t.Helper()
		if err := f.WaitStable(ctx); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		w.waitAcks(t, 20)
		t.Logf("%s: stable again after %s", step, time.Since(began).Round(time.Millisecond))
	}

	t.Run("postmaster killed", func(t *testing.T) {
		p := primary()
		began := time.Now()
		if err := p.KillPostmaster(); err != nil {
			t.Fatal(err)
		}
		// The monitor may fail over or not (see KillPostmaster).
		time.Sleep(4 * time.Second)
		stable("postmaster killed", began)
	})

	t.Run("primary node killed", func(t *testing.T) {
		p := primary()
		began := time.Now()
		if err := p.KillNode(); err != nil {
			t.Fatal(err)
		}
		next, err := f.waitNewPrimary(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("primary node killed: %s took writes after %s", next, time.Since(began).Round(time.Millisecond))
		began = time.Now()
		if err := p.StartNode(ctx); err != nil {
			t.Fatal(err)
		}
		stable("old primary restarted", began)
	})

	t.Run("failover", func(t *testing.T) {
		p := primary()
		began := time.Now()
		next, err := f.Failover(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if next == p {
			t.Fatalf("got %s as primary after the failover, want the other node", next)
		}
		t.Logf("failover: %s took writes after %s", next, time.Since(began).Round(time.Millisecond))
		stable("failover", began)
	})

	t.Run("standby stopped", func(t *testing.T) {
		p := primary()
		s := f.Other(p)
		began := time.Now()
		if err := s.StopNode(ctx); err != nil {
			t.Fatal(err)
		}
		// Synchronous commits wait until the monitor lets the primary
		// commit alone.
		w.waitAcks(t, 20)
		t.Logf("standby stopped: primary committing alone after %s", time.Since(began).Round(time.Millisecond))
		began = time.Now()
		if err := s.StartNode(ctx); err != nil {
			t.Fatal(err)
		}
		stable("standby restarted", began)
		if got := primary(); got != p {
			t.Errorf("got %s as primary, want %s still", got, p)
		}
	})

	t.Run("tail of a lagging standby", func(t *testing.T) {
		p := primary()
		began := time.Now()
		next, err := f.LoseTail(ctx, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("lose tail: %s took writes after %s", next, time.Since(began).Round(time.Millisecond))
		began = time.Now()
		if err := p.StartNode(ctx); err != nil {
			t.Fatal(err)
		}
		stable("old primary restarted", began)
	})

	w.stop()
	acked := w.ackedIDs()
	if lost := missing(t, primary(), acked); len(lost) > 0 {
		t.Errorf("%d of %d acknowledged commits missing on the primary: %v", len(lost), len(acked), lost)
	}
	t.Logf("%d commits acknowledged, none lost; %d failed", len(acked), w.failureCount())
}
