package hapg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"exactlyonce/localpg"
)

// create makes a new formation in the empty (or missing) f.dir: the
// monitor, then node1, which starts as a single primary, then node2 (and
// node3), which pg_autoctl clones from node1 with pg_basebackup and makes
// its standby.
// Each pg_autoctl create runs with --run, so that it stays on as the
// node's keeper instead of stopping the server it made for a later
// pg_autoctl run to start again.
func (f *Formation) create(ctx context.Context) (err error) {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is neither empty nor a formation (no %s)", f.dir, layoutFile)
	}
	if f.opts.Throwaway {
		// Armed before anything starts, so that even a failed start leaves
		// nothing behind.
		if err := watch(f.dir); err != nil {
			return err
		}
	}
	names := nodeNames(f.opts.standbys())
	ports, err := freePorts(1 + len(names))
	if err != nil {
		return err
	}
	l := layout{MonitorPort: ports[0], NodePorts: ports[1:]}
	f.place(l)
	f.created = true
	defer func() {
		if err != nil {
			// Nothing half-made is left for a later Start to mistake
			// for a formation, or running.
			f.abandon()
		}
	}()

	f.logf("creating a formation in %s (monitor :%d, %s)", f.dir, l.MonitorPort, f.describeNodes())
	for _, n := range append([]*Node{f.monitor}, f.nodes...) {
		if err := n.makeDirs(); err != nil {
			return err
		}
	}

	// initdb is the longest step but the clone's; the two run side by side.
	first := f.nodes[0]
	f.logf("initdb monitor and %s", first.name)
	var wg sync.WaitGroup
	var initErrs [2]error
	wg.Go(func() { initErrs[0] = f.monitor.initdb(ctx) })
	wg.Go(func() { initErrs[1] = first.initdb(ctx) })
	wg.Wait()
	if err := errors.Join(initErrs[:]...); err != nil {
		return err
	}
	if err := f.monitor.startKeeper("create", "monitor", "--run",
		"--pgdata", f.monitor.pgdata(), "--pgport", strconv.Itoa(f.monitor.port),
		"--listen", "127.0.0.1", "--hostname", "127.0.0.1",
		"--auth", "trust", "--no-ssl", "--pgctl", filepath.Join(f.bin, "pg_ctl")); err != nil {
		return err
	}
	if err := f.connectMonitor(ctx); err != nil {
		return err
	}
	if err := f.tuneMonitor(ctx); err != nil {
		return err
	}

	if err := f.createNode(ctx, first); err != nil {
		return err
	}
	if err := f.waitState(ctx, first, "single"); err != nil {
		return err
	}
	// Before the second node exists: see tuneNode.
	if err := f.tuneNode(ctx, first); err != nil {
		return err
	}
	// One standby at a time: each clone is a pg_basebackup of the primary,
	// and the monitor registers one node joining a group at a time.
	for i, n := range f.nodes[1:] {
		if i > 0 {
			if err := f.waitState(ctx, f.nodes[i], "secondary"); err != nil {
				return err
			}
		}
		if err := f.createNode(ctx, n); err != nil {
			return err
		}
	}
	f.logf("waiting for a stable formation")
	if err := f.WaitStable(ctx); err != nil {
		return err
	}
	if err := f.applyNumberSync(ctx); err != nil {
		return err
	}
	return writeLayout(f.dir, l)
}

// createNode registers n with the monitor and starts its keeper, which
// either uses the cluster initdb made (the first node) or clones the
// primary.
func (f *Formation) createNode(ctx context.Context, n *Node) error {
	f.logf("creating %s", n.name)
	return n.startKeeper("create", "postgres", "--run",
		"--pgdata", n.pgdata(), "--pgport", strconv.Itoa(n.port), "--name", n.name,
		"--listen", "127.0.0.1", "--hostname", "127.0.0.1",
		"--username", "postgres", "--dbname", "postgres",
		"--auth", "trust", "--no-ssl", "--pgctl", filepath.Join(f.bin, "pg_ctl"),
		"--monitor", f.MonitorURL(),
		"--replication-quorum", fmt.Sprint(f.opts.Sync))
}

// describeNodes lists the data nodes and their ports, for the log.
func (f *Formation) describeNodes() string {
	parts := make([]string, len(f.nodes))
	for i, n := range f.nodes {
		parts[i] = fmt.Sprintf("%s :%d", n.name, n.port)
	}
	return strings.Join(parts, ", ")
}

// makeDirs creates n's folder for user postgres, who runs its programs.
func (n *Node) makeDirs() error {
	xdg := filepath.Join(n.dir, "xdg")
	paths := []string{n.dir, xdg, filepath.Join(xdg, "config"), filepath.Join(xdg, "data"), filepath.Join(xdg, "run")}
	for _, p := range paths {
		if err := os.Mkdir(p, 0o700); err != nil {
			return err
		}
	}
	return localpg.GiveToServer(paths...)
}

// initdb creates n's cluster itself rather than leave it to pg_autoctl,
// which would: in UTF-8 with the C locale, as localpg does (in
// the environment env builds, without a locale, initdb would choose
// SQL_ASCII), and without
// waiting for the files to reach the disk when Throwaway, which halves the
// time a creation takes.
func (n *Node) initdb(ctx context.Context) error {
	args := []string{"-D", n.pgdata(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"}
	if n.f.opts.Throwaway {
		args = append(args, "--no-sync")
	}
	cmd, err := localpg.ServerCommand(ctx, "initdb", args...)
	if err != nil {
		return err
	}
	cmd.Env = n.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb %s: %w: %s", n.name, err, localpg.LastLines(out, 10))
	}
	return nil
}

// waitState waits until the monitor has n in state, reached and assigned.
func (f *Formation) waitState(ctx context.Context, n *Node, state string) error {
	for {
		states, err := f.State(ctx)
		if err == nil {
			for _, s := range states {
				if s.Name == n.name && s.Reported == state && s.Assigned == state {
					return nil
				}
			}
		}
		if n.exited() {
			return fmt.Errorf("%s: pg_autoctl exited%s", n.name, n.logTail())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s to be %s: %w (monitor: %s)%s", n.name, state, ctx.Err(), describe(states), n.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// abandon stops what a failed creation started and deletes what it made:
// f.dir was empty before.
func (f *Formation) abandon() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range append(f.Nodes(), f.monitor) {
		if err := n.stop(ctx); err != nil {
			n.kill() //nolint:errcheck // best effort: the caller returns the creation's error; the watchdog stops what is left at exit
		}
	}
	entries, _ := os.ReadDir(f.dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(f.dir, e.Name()))
	}
}
