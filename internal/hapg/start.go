package hapg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/internal/localpg"
)

// Start makes sure a formation is running in opts.Dir and returns it once
// it is stable: one primary and one secondary, in sync. It is idempotent: a
// formation found in Dir is reused, its stopped keepers started again, and
// only a missing or empty Dir gets a new one. Unless Throwaway, the
// formation keeps running after this process exits, for the next Start to
// reuse.
func Start(ctx context.Context, opts Options) (*Formation, error) {
	f, err := start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start formation: %w", err)
	}
	return f, nil
}

func start(ctx context.Context, opts Options) (*Formation, error) {
	if opts.Dir == "" {
		return nil, errors.New("no Dir")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if _, fellBack, err := localpg.UsableDataDir(dir); err != nil {
		return nil, err
	} else if fellBack {
		return nil, fmt.Errorf("user postgres cannot reach %s: choose a directory with localpg.UsableDataDir", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// pg_autoctl names its files after the resolved data directory.
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, err
	}
	bin, err := localpg.BinDir()
	if err != nil {
		return nil, err
	}
	f := &Formation{opts: opts, dir: dir, bin: bin}

	l, found, err := readLayout(dir)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	if found {
		f.logf("reusing the formation in %s", dir)
		f.place(l)
		err = f.resume(ctx)
	} else {
		err = f.create(ctx)
	}
	if err != nil {
		if f.pool != nil {
			f.pool.Close()
		}
		return nil, err
	}
	f.logf("formation ready in %s (%s): primary and secondary in sync, %s",
		dir, time.Since(began).Round(time.Millisecond), f.URL("postgres"))
	return f, nil
}

// place creates the formation's nodes on the ports of l.
func (f *Formation) place(l layout) {
	f.monitor = newNode(f, "monitor", l.MonitorPort)
	f.nodes = nil
	for i, name := range nodeNames {
		f.nodes = append(f.nodes, newNode(f, name, l.NodePorts[i]))
	}
}

// resume starts what is not running of a formation created earlier, and
// applies the options that may differ from its creation's.
func (f *Formation) resume(ctx context.Context) error {
	if err := f.monitor.start(ctx); err != nil {
		return fmt.Errorf("monitor: %w", err)
	}
	if err := f.connectMonitor(ctx); err != nil {
		return err
	}
	if err := f.tuneMonitor(ctx); err != nil {
		return err
	}
	for _, n := range f.nodes {
		if err := n.start(ctx); err != nil {
			return fmt.Errorf("%s: %w", n.name, err)
		}
	}
	for _, n := range f.nodes {
		if err := f.tuneNode(ctx, n); err != nil {
			return err
		}
	}
	if err := f.applyQuorum(ctx); err != nil {
		return err
	}
	return f.WaitStable(ctx)
}

// create makes a new formation in the empty (or missing) f.dir: the
// monitor, then node1, which starts as a single primary, then node2, which
// pg_autoctl clones from node1 with pg_basebackup and makes its standby.
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
	ports, err := freePorts(1 + len(nodeNames))
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

	f.logf("creating a formation in %s (monitor :%d, %s :%d, %s :%d)", f.dir,
		l.MonitorPort, nodeNames[0], l.NodePorts[0], nodeNames[1], l.NodePorts[1])
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
		"--pgdata", f.monitor.pgdata(), "--pgport", itoa(f.monitor.port),
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
	if err := f.createNode(ctx, f.nodes[1]); err != nil {
		return err
	}
	f.logf("waiting for a stable formation")
	if err := f.WaitStable(ctx); err != nil {
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
		"--pgdata", n.pgdata(), "--pgport", itoa(n.port), "--name", n.name,
		"--listen", "127.0.0.1", "--hostname", "127.0.0.1",
		"--username", "postgres", "--dbname", "postgres",
		"--auth", "trust", "--no-ssl", "--pgctl", filepath.Join(f.bin, "pg_ctl"),
		"--monitor", f.MonitorURL(),
		"--replication-quorum", fmt.Sprint(f.opts.Sync))
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
// which would: in UTF-8 with the C locale, as internal/localpg does (with
// the machine's locale unset, initdb would choose SQL_ASCII), and without
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
		return fmt.Errorf("initdb %s: %w: %s", n.name, err, lastLines(out, 10))
	}
	return nil
}

// connectMonitor opens the pool on the monitor's database, once the
// monitor has created it.
func (f *Formation) connectMonitor(ctx context.Context) error {
	cfg, err := pgxpool.ParseConfig(f.monitor.URL("pg_auto_failover"))
	if err != nil {
		return err
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	f.pool = pool
	for {
		// The extension's schema is the last thing the monitor's creation
		// makes.
		var ok bool
		err := pool.QueryRow(ctx, "SELECT to_regclass('pgautofailover.node') IS NOT NULL").Scan(&ok)
		if err == nil && ok {
			return nil
		}
		if _, running := f.monitor.keeperPID(); !running && f.monitor.exited() {
			return fmt.Errorf("monitor exited%s", f.monitor.logTail())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the monitor: %w (last: %v)%s", ctx.Err(), err, f.monitor.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
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

// exited reports whether the keeper this process started for n has
// exited.
func (n *Node) exited() bool {
	n.mu.Lock()
	k := n.keeper
	n.mu.Unlock()
	if k == nil {
		return false
	}
	select {
	case <-k.done:
		return true
	default:
		return false
	}
}

// abandon stops what a failed creation started and deletes what it made:
// f.dir was empty before.
func (f *Formation) abandon() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range append(f.Nodes(), f.monitor) {
		if err := n.stop(ctx); err != nil {
			n.kill()
		}
	}
	entries, _ := os.ReadDir(f.dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(f.dir, e.Name()))
	}
}

func itoa(i int) string { return fmt.Sprint(i) }
