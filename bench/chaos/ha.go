package chaos

import (
	"context"
	"exactlyonce/bench/chaos/chaosdb"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"exactlyonce/bench/hapg"
	"exactlyonce/bench/haproxy"
)

// The failover runs (Config.HA): the shops write to a pg_auto_failover
// formation (bench/hapg) through one multi-host URL
// (target_session_attrs=read-write), and clients reach them through
// HAProxy (bench/haproxy), which takes an instance out of rotation while
// its /readyz fails. The disruptions below happen one at a time, each
// waiting for the formation to be whole again (a primary and a secondary in
// sync) before the next.
const (
	// windowFailover is the primary's whole node killed (keeper and
	// PostgreSQL), just after its standby's WAL receiver was paused for
	// TailLag: the monitor promotes the standby, which lacks the last
	// TailLag of WAL. Synchronous, those commits were never acknowledged
	// (they waited for the standby) and nothing a client was told is
	// lost; asynchronous, they were, and are (the counterexample). The
	// old primary is then started again and rejoins as the standby.
	windowFailover = "failover (primary killed)"
	// windowSwitchover is `pg_autoctl perform failover`: the primary
	// drains and is demoted, its standby promoted.
	windowSwitchover = "switchover"
	// windowPrimaryKill is kill -9 of the primary's postmaster only: its
	// keeper restarts it, usually without a failover.
	windowPrimaryKill = "primary postmaster kill"
	// windowStandbyStop is the standby stopped for StandbyDown, then
	// started again: it falls behind and catches up (synchronous with one
	// standby, the primary commits alone meanwhile; with two, the other
	// standby confirms commits, and the primary stays primary).
	windowStandbyStop = "standby stopped"
)

// haHold is what each failover disruption is planned to last, for
// planLasting: the disruption, then the formation made whole again (an old
// primary rewound and caught up). The runs measure what they took.
func (c Config) haHold(kind string) time.Duration {
	switch kind {
	case windowFailover:
		return c.TailLag + 15*time.Second
	case windowSwitchover:
		return 12 * time.Second
	case windowPrimaryKill:
		return 6 * time.Second
	}
	return c.StandbyDown + 8*time.Second
}

// haStable bounds the wait for the formation to be whole again after a
// disruption, and at the heal.
const haStable = 2 * time.Minute

// startFormation starts the shop's database as a formation of its own in
// dir/ha, synchronous unless Async.
func (cl *cluster) startFormation(ctx context.Context, logf func(string, ...any)) (url string, err error) {
	cl.ha, err = hapg.Start(ctx, hapg.Options{Dir: filepath.Join(cl.dir, "ha"), Sync: !cl.cfg.Async,
		Throwaway: true, Fast: true, Standbys: cl.cfg.Standbys})
	if err != nil {
		return "", err
	}
	mode := "synchronous"
	if cl.cfg.Async {
		mode = "asynchronous"
	}
	logf("pg_auto_failover formation ready (%d %s standby(s)) in %s", len(cl.ha.Nodes())-1, mode, filepath.Join(cl.dir, "ha"))
	return cl.ha.URL("postgres"), nil
}

// startFront starts HAProxy in front of the shops at servers, on the
// address the shops were told to answer for (ALLOWED_HOSTS).
func (cl *cluster) startFront(ctx context.Context, addr string, servers []string, logf func(string, ...any)) error {
	var err error
	if cl.front, err = haproxy.Start(ctx, haproxy.Config{Listen: addr, Servers: servers}, cl.dir); err != nil {
		return err
	}
	logf("HAProxy on %s in front of %d shops", addr, len(servers))
	return nil
}

// planFailovers adds the failover disruptions to the lasting ones, as one
// chain: each waits for the formation to be whole again after the one
// before (disruptFormation), so planned apart they still ran back to back,
// and one that ran long (a failover takes up to 40 s on a loaded 2-core
// machine against its planned 16.5 s) pushed the next past the end of the
// drive, where it is not made and the run fails: a flake of the short run.
// Planned as one span, the chain starts where the whole of it fits, or as
// early as the plan allows, and the drive's tail is left to the slow ones.
// The kinds alternate (failover, switchover, …), so that a short chain
// still has one of each.
func (cl *cluster) planFailovers(ctx context.Context, add func(n int, hold time.Duration, role spanRole, do func()), t *tally, logf func(string, ...any)) {
	if cl.ha == nil {
		return
	}
	left := map[string]int{windowFailover: cl.cfg.Failovers, windowSwitchover: cl.cfg.Switchovers,
		windowPrimaryKill: cl.cfg.PrimaryKills, windowStandbyStop: cl.cfg.StandbyStops}
	var (
		chain []string
		hold  time.Duration
	)
	for more := true; more; {
		more = false
		for _, kind := range []string{windowFailover, windowSwitchover, windowPrimaryKill, windowStandbyStop} {
			if left[kind] > 0 {
				left[kind]--
				chain = append(chain, kind)
				hold += cl.cfg.haHold(kind)
				more = true
			}
		}
	}
	if len(chain) == 0 {
		return
	}
	add(1, hold, roleDisturbs, func() {
		for _, kind := range chain {
			cl.disruptFormation(ctx, kind, t, logf)
		}
	})
}

// disruptFormation makes one failover disruption of kind, after any other
// in progress, and waits for the formation to be whole again.
func (cl *cluster) disruptFormation(ctx context.Context, kind string, t *tally, logf func(string, ...any)) {
	cl.haMu.Lock()
	defer cl.haMu.Unlock()
	if ctx.Err() != nil {
		logf("no %s: %v", kind, errDriveOver)
		return
	}
	// The disruption runs to its end even if the drive ends meanwhile: a
	// formation left half-failed would fail the settling.
	ctx = context.WithoutCancel(ctx)
	before, err := cl.ha.Primary(ctx)
	if err != nil {
		t.fail(kind, err)
		return
	}
	began := time.Now()
	if err := cl.disruptOnce(ctx, kind, before, logf); err != nil {
		t.fail(kind, err)
	}
	stable, cancel := context.WithTimeout(ctx, haStable)
	defer cancel()
	if err := cl.ha.WaitStable(stable); err != nil {
		t.fail(kind+": formation not whole again", err)
		return
	}
	t.span(kind, began)
	after, err := cl.ha.Primary(ctx)
	changed := err == nil && after != before
	logf("%s over in %s; primary %s", kind, time.Since(began).Round(time.Millisecond), after)
	t.count(func(d *Disruptions) {
		switch kind {
		case windowFailover:
			d.Failovers++
		case windowSwitchover:
			d.Switchovers++
		case windowPrimaryKill:
			d.PrimaryKills++
		case windowStandbyStop:
			d.StandbyStops++
		}
		if changed {
			d.PrimaryChanges++
		}
	})
}

// disruptOnce does the disruption itself, up to the point where the
// formation can make itself whole (a node to start again included).
func (cl *cluster) disruptOnce(ctx context.Context, kind string, primary *hapg.Node, logf func(string, ...any)) error {
	switch kind {
	case windowFailover:
		if cl.cfg.Async {
			// LoseTail needs writers committing while it cuts the tail: an
			// asynchronous run that must find the acknowledged writes a
			// failover loses finds none when it comes before the orders
			// flow, or while the shops are stopped (measured: a failover at
			// 3.3 s of a 25 s run lost nothing, and the run failed).
			cl.waitForWrites(ctx, logf)
		}
		logf("failover: pause the standbys' WAL receivers for %s, kill the primary %s", cl.cfg.TailLag, primary)
		next, err := cl.ha.LoseTail(ctx, cl.cfg.TailLag)
		if err != nil {
			return err
		}
		logf("%s promoted; starting %s again as its standby", next, primary)
		return primary.StartNode(ctx)
	case windowSwitchover:
		logf("switchover from %s (pg_autoctl perform failover)", primary)
		_, err := cl.ha.Failover(ctx)
		return err
	case windowPrimaryKill:
		logf("kill -9 the postmaster of the primary %s", primary)
		return primary.KillPostmaster()
	case windowStandbyStop:
		standby := cl.ha.Other(primary)
		logf("stop the standby %s for %s", standby, cl.cfg.StandbyDown)
		if err := standby.StopNode(ctx); err != nil {
			return err
		}
		time.Sleep(cl.cfg.StandbyDown)
		return standby.StartNode(ctx)
	}
	return fmt.Errorf("no failover disruption %q", kind)
}

// healFormation starts every node again and waits for the formation to be
// whole.
func (cl *cluster) healFormation(ctx context.Context) error {
	cl.haMu.Lock()
	defer cl.haMu.Unlock()
	for _, n := range cl.ha.Nodes() {
		if err := n.StartNode(ctx); err != nil {
			return err
		}
	}
	stable, cancel := context.WithTimeout(ctx, haStable)
	defer cancel()
	return cl.ha.WaitStable(stable)
}

// writeMonitorEvents keeps the monitor's events of the run in the run's
// folder (monitor-events.txt), beside the processes' logs: what the
// formation went through, and why, to read when a run failed.
func (cl *cluster) writeMonitorEvents(ctx context.Context, since time.Time, logf func(string, ...any)) {
	events, err := cl.ha.Events(ctx, since)
	if err != nil {
		logf("no monitor events: %v", err)
		return
	}
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e.String() + "\n")
	}
	if err := os.WriteFile(filepath.Join(cl.dir, "monitor-events.txt"), []byte(b.String()), 0o644); err != nil {
		logf("no monitor events: %v", err)
	}
}

// writesFlowing is how many new orders within writesWindow show that the
// shops are placing orders, and writesWait the longest waitForWrites waits
// for them.
const (
	writesFlowing = 3
	writesWindow  = time.Second
	writesWait    = time.Minute
)

// waitForWrites waits until the shops place orders again: writesFlowing
// new ones within writesWindow, or writesWait has passed (then the failover
// is made anyway, and the run's verdict says what it found).
func (cl *cluster) waitForWrites(ctx context.Context, logf func(string, ...any)) {
	q := chaosdb.New(cl.db.Conn())
	deadline := time.Now().Add(writesWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		before, err := q.ChaosOrderCount(ctx)
		if err == nil {
			time.Sleep(writesWindow)
			after, err := q.ChaosOrderCount(ctx)
			if err == nil && after-before >= writesFlowing {
				return
			}
		} else {
			time.Sleep(writesWindow)
		}
	}
	logf("failover: the shops placed no orders for %s; failing over anyway", writesWait)
}
