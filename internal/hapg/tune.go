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
// do. startup_grace_period holds failovers back after the monitor starts.
var fastMonitorSettings = []struct{ name, value string }{
	{"pgautofailover.health_check_period", "1000"},               // default 5000 ms
	{"pgautofailover.health_check_timeout", "1000"},              // default 5000 ms
	{"pgautofailover.health_check_max_retries", "1"},             // default 2
	{"pgautofailover.health_check_retry_delay", "500"},           // default 2000 ms
	{"pgautofailover.node_considered_unhealthy_timeout", "3000"}, // default 20000 ms
	{"pgautofailover.primary_demote_timeout", "1500"},            // default 30000 ms
	{"pgautofailover.startup_grace_period", "2000"},              // default 10000 ms
}

// tuneMonitor applies Options.Fast to the monitor, or puts back its
// defaults, and reloads its configuration.
func (f *Formation) tuneMonitor(ctx context.Context) error {
	for _, s := range fastMonitorSettings {
		sql := "ALTER SYSTEM RESET " + s.name
		if f.opts.Fast {
			sql = "ALTER SYSTEM SET " + s.name + " = " + s.value
		}
		if _, err := f.pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("tune the monitor: %w", err)
		}
	}
	if _, err := f.pool.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("tune the monitor: %w", err)
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
		if err := n.autoctl(ctx, "set", "node", "replication-quorum", "--pgdata", n.pgdata(), fmt.Sprint(f.opts.Sync)); err != nil {
			return err
		}
	}
	return nil
}
