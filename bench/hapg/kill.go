package hapg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KillPostmaster kills the node's postmaster with SIGKILL, and nothing
// else: its backends notice and exit, and its keeper, still alive, starts
// PostgreSQL again, which replays its WAL; writes resume within about a
// second. Whether the monitor also fails over is a race in pg_auto_failover
// 2.0: it takes a keeper's report that PostgreSQL is not running for a
// failure at once, without waiting for its detection time, so it fails
// over if the primary's keeper reports before it has restarted PostgreSQL.
// Measured with Fast: the first kill of a new formation's primary failed
// over every time (8 of 8), later kills of a primary that came from a
// failover never did (0 of 24; see docs/ha.md). Either way no
// acknowledged commit is lost with Sync.
func (n *Node) KillPostmaster() error {
	pid, ok := n.postmasterPID()
	if !ok {
		return fmt.Errorf("kill postmaster of %s: not running", n.name)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill postmaster of %s: %w", n.name, err)
	}
	n.f.logf("killed the postmaster of %s (pid %d)", n.name, pid)
	return nil
}

// KillNode kills the whole node, as a power cut would: the keeper, its
// sub-processes, the postmaster and all of PostgreSQL's processes, with
// SIGKILL, and waits until they are gone. Nothing is left to restart
// PostgreSQL or to report to the monitor, which fails over to the other
// node once its failure detection time has passed. StartNode brings it
// back as a standby.
//
// The processes are first all stopped (SIGSTOP), then all killed, so that
// none of them acts on the others' deaths in between: a postmaster that saw
// its children die would otherwise restart them, and a keeper would
// restart a dead postmaster.
func (n *Node) KillNode() error {
	if err := n.kill(); err != nil {
		return fmt.Errorf("kill node %s: %w", n.name, err)
	}
	return nil
}

func (n *Node) kill() error {
	var roots []int
	if pid, ok := n.keeperPID(); ok {
		roots = append(roots, pid)
	}
	// Found on its own too: after a KillPostmaster the keeper may be
	// between postmasters, or it may have been killed alone.
	if pid, ok := n.postmasterPID(); ok {
		roots = append(roots, pid)
	}
	if len(roots) == 0 {
		return errors.New("not running")
	}
	var stopped []int
	for {
		var fresh []int
		for _, pid := range descendants(roots) {
			if !slices.Contains(stopped, pid) {
				fresh = append(fresh, pid)
			}
		}
		if len(fresh) == 0 {
			break
		}
		for _, pid := range fresh {
			syscall.Kill(pid, syscall.SIGSTOP)
		}
		stopped = append(stopped, fresh...)
	}
	for _, pid := range stopped {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := waitGone(ctx, stopped...); err != nil {
		return err
	}
	n.f.logf("killed node %s (%d processes)", n.name, len(stopped))
	return nil
}

// descendants returns roots and all their descendants, from the kernel's
// lists of each thread's children.
func descendants(roots []int) []int {
	var all []int
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if slices.Contains(all, pid) {
			continue
		}
		all = append(all, pid)
		queue = append(queue, children(pid)...)
	}
	return all
}

func children(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var kids []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for f := range strings.FieldsSeq(string(b)) {
			if kid, err := strconv.Atoi(f); err == nil {
				kids = append(kids, kid)
			}
		}
	}
	return kids
}
