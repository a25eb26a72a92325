package hapg

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Node is one PostgreSQL server of a formation with the pg_autoctl service
// (its keeper) that manages it: a data node, or the monitor.
type Node struct {
	f    *Formation
	name string
	port int
	dir  string // the node's folder: pgdata/ and pg_autoctl's xdg/

	mu     sync.Mutex
	keeper *keeper // the service this process started last, if any
}

func newNode(f *Formation, name string, port int) *Node {
	return &Node{f: f, name: name, port: port, dir: filepath.Join(f.dir, name)}
}

// Name returns the node's name: node1, node2 or monitor.
func (n *Node) Name() string { return n.name }

// Port returns the loopback TCP port the node's PostgreSQL listens on.
func (n *Node) Port() int { return n.port }

// URL returns a connection string for database on this node only, as the
// superuser postgres.
func (n *Node) URL(database string) string {
	return "postgres://postgres@127.0.0.1:" + strconv.Itoa(n.port) + "/" + url.PathEscape(database) + "?sslmode=disable&connect_timeout=5"
}

func (n *Node) String() string { return n.name }

func (n *Node) pgdata() string  { return filepath.Join(n.dir, "pgdata") }
func (n *Node) logPath() string { return filepath.Join(n.f.dir, n.name+".log") }

// StartNode starts the node's keeper again (pg_autoctl run) in the
// background, unless it is running, and returns once the keeper has
// started. The keeper starts PostgreSQL and asks the monitor what to be: a
// node that was primary before a failover comes back as a secondary,
// rewound with pg_rewind as needed. Call WaitStable to wait for that.
func (n *Node) StartNode(ctx context.Context) error {
	if err := n.start(ctx); err != nil {
		return fmt.Errorf("start %s: %w", n.name, err)
	}
	return nil
}

func (n *Node) start(ctx context.Context) error {
	if _, running := n.keeperPID(); running {
		return nil
	}
	if err := n.startKeeper("run", "--pgdata", n.pgdata()); err != nil {
		return err
	}
	n.mu.Lock()
	k := n.keeper
	n.mu.Unlock()
	// Started means it has written its pid file: before that, a KillNode
	// or StopNode would not find it.
	for {
		if pid, ok := n.keeperPID(); ok && pid == k.pid {
			n.f.logf("started the keeper of %s (pid %d)", n.name, pid)
			return nil
		}
		select {
		case <-k.done:
			return fmt.Errorf("pg_autoctl run exited%s", n.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// StopNode stops the node gracefully, as `pg_autoctl stop` does (SIGTERM to
// the keeper, which stops PostgreSQL with a fast shutdown), and waits until
// the keeper and its PostgreSQL are gone. Stopping a stopped node does
// nothing. Stopping a standby for a while and starting it again is how a
// standby falls behind and catches up; the monitor notices it gone after
// its failure detection time and, if it was synchronous, lets the primary
// commit alone (wait_primary) until it is back.
func (n *Node) StopNode(ctx context.Context) error {
	if err := n.stop(ctx); err != nil {
		return fmt.Errorf("stop %s: %w", n.name, err)
	}
	return nil
}

func (n *Node) stop(ctx context.Context) error {
	pid, running := n.keeperPID()
	pm, pmRunning := n.postmasterPID()
	if !running {
		if pmRunning {
			// A postmaster without its keeper is one whose keeper was
			// killed alone: stop it as its keeper would have.
			if err := syscall.Kill(pm, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
				return err
			}
			return waitGone(ctx, pm)
		}
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	pids := []int{pid}
	if pmRunning {
		pids = append(pids, pm)
	}
	if err := waitGone(ctx, pids...); err != nil {
		return err
	}
	n.f.logf("stopped %s", n.name)
	return nil
}
