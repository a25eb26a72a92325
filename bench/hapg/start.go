package hapg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/localpg"
)

// Start makes sure a formation is running in opts.Dir and returns it once
// it is stable: one primary and its secondaries, in sync. It is idempotent: a
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
	if opts.Standbys > 2 {
		return nil, fmt.Errorf("%d standbys: at most 2", opts.Standbys)
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
		if len(l.NodePorts) != 1+opts.standbys() {
			return nil, fmt.Errorf("the formation in %s has %d standbys, not %d: delete it to create another",
				dir, len(l.NodePorts)-1, opts.standbys())
		}
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
	f.logf("formation ready in %s (%s): primary and %d standby(s) in sync, %s",
		dir, time.Since(began).Round(time.Millisecond), len(f.nodes)-1, f.URL("postgres"))
	return f, nil
}

// place creates the formation's nodes on the ports of l.
func (f *Formation) place(l layout) {
	f.monitor = newNode(f, "monitor", l.MonitorPort)
	f.nodes = nil
	for i, name := range nodeNames(len(l.NodePorts) - 1) {
		f.nodes = append(f.nodes, newNode(f, name, l.NodePorts[i]))
	}
}

// resume starts what is not running of a formation created earlier, and
// applies the options that may differ from its creation's. The monitor
// starts first, because a keeper gives up when it finds none. The monitor
// may fail over once then (3 of the 3 restarts watched): the old primary's
// keeper reports its PostgreSQL not yet running while the monitor still
// has the standby as healthy from before the stop, and pg_auto_failover
// 2.0 takes such a report for a failure at once, startup_grace_period or
// not. WaitStable waits that out.
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
	if err := f.WaitStable(ctx); err != nil {
		return err
	}
	return f.applyNumberSync(ctx)
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
