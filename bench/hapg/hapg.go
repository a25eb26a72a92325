// Package hapg runs a highly available PostgreSQL on this machine: a
// pg_auto_failover 2.0 formation of a monitor and two data nodes (three
// with Options.Standbys 2), each a
// PostgreSQL 15 server with its keeper (pg_autoctl), on loopback ports. It
// exists so that the exactly-once claim can be tested across a database
// failover: tests and the chaos harness kill, pause and fail over its nodes
// while shops write through one multi-host URL, and `make ha` runs one for a
// shop to be pointed at by hand.
//
// The formation is synchronous (Options.Sync) the only way pg_auto_failover
// 2.0 allows with two data nodes: the standby is in the replication quorum
// (synchronous_standby_names = 'ANY 1 (...)', synchronous_commit on), so a
// commit is acknowledged once the standby has flushed it. Asynchronous, the
// standby is out of the quorum, and LoseTail shows what that costs.
//
// Synchronous with one standby is not synchronous all the time: once the
// monitor takes the standby for failed it empties synchronous_standby_names
// (wait_primary) and the primary commits alone, and a commit that was
// already waiting for the standby is then released as committed. With
// Options.Standbys 2, both in the quorum, the formation's
// number_sync_standbys is 1 (pg_auto_failover 2.0 accepts it only with at
// least two standbys): synchronous_standby_names = 'ANY 1 (two standbys)',
// and one lost standby leaves the other confirming commits, the names
// untouched (docs/ha.md).
//
// Everything runs as the OS user postgres when we are root, as
// localpg does, and trusts every local connection: it is for local
// use only.
package hapg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Options say where a formation lives and how it behaves.
type Options struct {
	// Dir holds everything: the monitor's and each node's data directory
	// and pg_autoctl's files (monitor/, node1/, node2/), their logs
	// (monitor.log, node1.log, node2.log) and the ports (formation.json).
	// User postgres must be able to reach it (see localpg.UsableDataDir).
	Dir string
	// Sync puts the standby in the replication quorum, so that no
	// acknowledged commit is lost when the primary dies; false leaves it
	// out (asynchronous replication). It is applied to a reused formation
	// too.
	Sync bool
	// Throwaway ties a formation that Start creates to this process: once
	// the process exits, however it exits, its keepers and servers are
	// stopped and Dir deleted (a watchdog process, as in localpg). It also
	// turns fsync off: only a crash of the machine, not of a server, would
	// lose what that skips, so synchronous_commit keeps its meaning for
	// the kills of tests. An existing formation is never deleted.
	Throwaway bool
	// Fast tunes the monitor to declare a dead primary failed within
	// seconds instead of about a minute (see fastMonitorSettings), and the
	// standbys to reconnect to a restarted primary within half a second.
	// It is applied to a reused formation too.
	Fast bool
	// Standbys is how many standbys the primary has: 1 (the default, for
	// 0) or 2. With 2 and Sync, both are in the replication quorum and the
	// formation's number_sync_standbys is 1, so a commit waits for either
	// of them and one standby lost does not make the primary commit alone.
	// A reused formation keeps the number it was created with; Start
	// fails if it differs.
	Standbys int
	// Log, if not nil, receives a line for each step taken.
	Log io.Writer
}

// standbys returns Options.Standbys with its default applied.
func (o Options) standbys() int {
	if o.Standbys <= 0 {
		return 1
	}
	return o.Standbys
}

// Formation is a running pg_auto_failover formation: a monitor and two
// data nodes, or three (Options.Standbys). Its methods may be called from
// several goroutines.
type Formation struct {
	opts    Options
	dir     string // opts.Dir, absolute, symbolic links resolved
	bin     string // PostgreSQL's programs
	created bool   // by this Start, rather than reused
	monitor *Node
	nodes   []*Node
	pool    *pgxpool.Pool // the monitor's database, as superuser

	logMu sync.Mutex
}

// formationName and groupID are pg_autoctl's defaults, which a formation of
// one group uses.
const (
	formationName = "default"
	groupID       = 0
)

// URL returns a connection string for database that reaches whichever node
// is the primary: libpq's and pgx's multi-host form, with
// target_session_attrs=read-write so that a connection is only kept on a
// node that accepts writes, and a connect timeout so that an unreachable
// node is skipped rather than waited for.
func (f *Formation) URL(database string) string {
	hosts := make([]string, len(f.nodes))
	for i, n := range f.nodes {
		hosts[i] = "127.0.0.1:" + strconv.Itoa(n.port)
	}
	q := url.Values{"target_session_attrs": {"read-write"}, "sslmode": {"disable"}, "connect_timeout": {"5"}}
	return "postgres://postgres@" + strings.Join(hosts, ",") + "/" + url.PathEscape(database) + "?" + q.Encode()
}

// MonitorURL returns the monitor's connection string as the keepers use it
// (user autoctl_node, database pg_auto_failover), which is what
// pg_autoctl's --monitor option takes.
func (f *Formation) MonitorURL() string {
	return fmt.Sprintf("postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable", f.monitor.port)
}

// Nodes returns the data nodes, node1 first.
func (f *Formation) Nodes() []*Node {
	return append([]*Node(nil), f.nodes...)
}

// Monitor returns the monitor, for its URL, or to stop or kill it.
func (f *Formation) Monitor() *Node {
	return f.monitor
}

func (f *Formation) logf(format string, args ...any) {
	if f.opts.Log == nil {
		return
	}
	f.logMu.Lock()
	defer f.logMu.Unlock()
	fmt.Fprintf(f.opts.Log, "hapg: "+format+"\n", args...)
}

// Stop stops the monitor, then the data nodes, each keeper stopping its
// PostgreSQL, and waits until they are gone. The monitor goes first so
// that it does not see the nodes go one after the other and start a
// failover on the way down. A throwaway
// formation's files are then deleted, if this process created it; the
// others are kept for the next Start to reuse.
func (f *Formation) Stop(ctx context.Context) error {
	f.pool.Close()
	if err := f.monitor.StopNode(ctx); err != nil {
		return fmt.Errorf("stop formation: %w", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(f.nodes))
	for i, n := range f.nodes {
		wg.Go(func() { errs[i] = n.StopNode(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop formation: %w", err)
	}
	if f.opts.Throwaway && f.created {
		// Files of the servers belong to user postgres, but we are root
		// whenever they do.
		if err := os.RemoveAll(f.dir); err != nil {
			return fmt.Errorf("stop formation: remove %s: %w", f.dir, err)
		}
	}
	f.logf("stopped the formation in %s", f.dir)
	return nil
}
