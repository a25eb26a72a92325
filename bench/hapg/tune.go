package hapg

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// fastMonitorSettings make the monitor declare a dead node failed in about
// 3 s and promote its standby about 2 s later, where its defaults take
// about a minute (measured figures: docs/ha.md). A node is failed once its
// keeper has not reported for node_considered_unhealthy_timeout and the
// monitor's health check (a connection every health_check_period, retried
// health_check_max_retries times health_check_retry_delay apart, each
// waiting health_check_timeout) fails; both must fail, so a keeper slowed
// by a busy machine does not cause a failover while PostgreSQL answers.
// primary_demote_timeout is how long a failed primary is given to demote
// itself before its standby takes writes: one that is dead has nothing to
// do. startup_grace_period, which holds failovers back for 10 s after the
// monitor starts (when the monitor itself restarts), is left alone: the
// nodes need those seconds to report again.
var fastMonitorSettings = []struct{ name, value string }{
	{"pgautofailover.health_check_period", "1000"},               // default 5000 ms
	{"pgautofailover.health_check_timeout", "1000"},              // default 5000 ms
	{"pgautofailover.health_check_max_retries", "1"},             // default 2
	{"pgautofailover.health_check_retry_delay", "500"},           // default 2000 ms
	{"pgautofailover.node_considered_unhealthy_timeout", "3000"}, // default 20000 ms
	{"pgautofailover.primary_demote_timeout", "1500"},            // default 30000 ms
}

// promoteThreshold replaces pgautofailover.promote_wal_log_threshold (16
// MB): the monitor promotes a standby only if its last reported LSN is
// within that many bytes of the failed primary's. A standby whose
// PostgreSQL restarted (KillWALReceiver, LoseTail, a crash, StopNode) and
// has not streamed since reports the start of its current 16 MB WAL
// segment instead of its position (pg_last_wal_receive_lsn starts there),
// so with the default the monitor would, at random, never promote it and
// leave the formation without a primary (measured: 1 of 3 tries with the
// standby 15.9 MB into a segment). The threshold exists to keep a far
// behind asynchronous standby from being promoted; a formation for tests
// wants the failover, and LoseTail wants it most. Only throwaway formations
// (tests, the chaos harness) raise it: `make ha`'s keeps pg_auto_failover's
// default, as a deployment would.
const promoteThreshold = "1073741824" // 1 GB

// tuneMonitor applies the monitor settings (fastMonitorSettings with
// Options.Fast, their defaults without; promoteThreshold with
// Options.Throwaway) and reloads its configuration.
func (f *Formation) tuneMonitor(ctx context.Context) error {
	sqls := []string{"ALTER SYSTEM RESET pgautofailover.promote_wal_log_threshold"}
	if f.opts.Throwaway {
		sqls[0] = "ALTER SYSTEM SET pgautofailover.promote_wal_log_threshold = " + promoteThreshold
	}
	for _, s := range fastMonitorSettings {
		if f.opts.Fast {
			sqls = append(sqls, "ALTER SYSTEM SET "+s.name+" = "+s.value)
		} else {
			sqls = append(sqls, "ALTER SYSTEM RESET "+s.name)
		}
	}
	sqls = append(sqls, "SELECT pg_reload_conf()")
	for _, sql := range sqls {
		if _, err := f.pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("tune the monitor: %w", err)
		}
	}
	return nil
}

// nodeSettings are the data nodes' settings that Options decide, with
// their values; "" puts back PostgreSQL's default.
func (f *Formation) nodeSettings() map[string]string {
	s := map[string]string{"fsync": "", "wal_retrieve_retry_interval": ""}
	if f.opts.Throwaway {
		// Not full_page_writes: pg_rewind needs it, to rejoin an old
		// primary.
		s["fsync"] = "off"
	}
	if f.opts.Fast {
		// A standby whose primary restarted (KillPostmaster) tries again
		// after this long (default 5 s), and synchronous commits wait for
		// it until then.
		s["wal_retrieve_retry_interval"] = "500ms"
	}
	return s
}

// tuneNode writes the node settings to n's postgresql.auto.conf (ALTER
// SYSTEM, which a standby accepts too), reloads its configuration and
// takes a checkpoint. The first node is tuned before the second is cloned
// from it, which copies the file (as a pg_rewind does), and the checkpoint
// makes the clone's own, which pg_autoctl asks to be spread over minutes if
// there is much to write, a short one.
func (f *Formation) tuneNode(ctx context.Context, n *Node) error {
	conn, err := connectWhenUp(ctx, n)
	if err != nil {
		return fmt.Errorf("tune %s: %w", n.name, err)
	}
	defer conn.Close(context.Background())
	var sqls []string
	for name, value := range f.nodeSettings() {
		if value == "" {
			sqls = append(sqls, "ALTER SYSTEM RESET "+name)
		} else {
			sqls = append(sqls, "ALTER SYSTEM SET "+name+" = '"+value+"'")
		}
	}
	sqls = append(sqls, "SELECT pg_reload_conf()", "CHECKPOINT")
	for _, sql := range sqls {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("tune %s: %w", n.name, err)
		}
	}
	return nil
}

// connectWhenUp connects to n, waiting for its PostgreSQL to accept
// connections: its keeper starts it.
func connectWhenUp(ctx context.Context, n *Node) (*pgx.Conn, error) {
	for {
		conn, err := pgx.Connect(ctx, n.URL("postgres"))
		if err == nil {
			return conn, nil
		}
		if n.exited() {
			return nil, fmt.Errorf("pg_autoctl exited%s", n.logTail())
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for %s to accept connections: %w (last: %v)", n.name, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// applyQuorum sets each node's replication-quorum property to Options.Sync
// where it differs (a formation reused with the other choice), through
// pg_autoctl, which waits for the primary to apply the new
// synchronous_standby_names.
func (f *Formation) applyQuorum(ctx context.Context) error {
	states, err := f.State(ctx)
	if err != nil {
		return err
	}
	for _, s := range states {
		if s.Quorum == f.opts.Sync {
			continue
		}
		n, err := f.node(s.Name)
		if err != nil {
			return err
		}
		f.logf("setting replication-quorum of %s to %v", n.name, f.opts.Sync)
		if err := n.set(ctx, "node", "replication-quorum", "--pgdata", n.pgdata(), fmt.Sprint(f.opts.Sync)); err != nil {
			return err
		}
	}
	return nil
}

// applyNumberSync sets the formation's number_sync_standbys: 1 for a
// synchronous formation of two standbys, so that a commit waits for either
// and one standby lost leaves the other in synchronous_standby_names; 0
// otherwise, the only value pg_auto_failover 2.0 accepts with one standby
// (it wants number_sync_standbys + 1 standbys that may be promoted). With a
// second standby in the quorum the monitor sets 1 by itself; setting it
// here says so, and undoes a 0 left by an asynchronous start of the same
// formation.
func (f *Formation) applyNumberSync(ctx context.Context) error {
	want := 0
	if f.opts.Sync && len(f.nodes) > 2 {
		want = 1
	}
	var got int
	if err := f.pool.QueryRow(ctx, "SELECT number_sync_standbys FROM pgautofailover.formation WHERE formationid = $1",
		formationName).Scan(&got); err != nil {
		return fmt.Errorf("number_sync_standbys: %w", err)
	}
	if got == want {
		return nil
	}
	f.logf("setting number-sync-standbys of the formation to %d (was %d)", want, got)
	if err := f.monitor.set(ctx, "formation", "number-sync-standbys", "--pgdata", f.monitor.pgdata(), fmt.Sprint(want)); err != nil {
		return err
	}
	return f.WaitStable(ctx)
}
