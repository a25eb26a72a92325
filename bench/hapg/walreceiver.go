package hapg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// PauseWALReceiver stops (SIGSTOP) the WAL receiver of this node, a
// standby: it stops reading what the primary streams, which piles up in
// the socket's buffers, unacknowledged. With Sync the primary's commits
// then wait; without, they are acknowledged all the same and the standby
// falls behind. resume continues it (SIGCONT), and it catches up.
func (n *Node) PauseWALReceiver() (resume func() error, err error) {
	pid, err := n.walReceiverPID()
	if err != nil {
		return nil, fmt.Errorf("pause WAL receiver of %s: %w", n.name, err)
	}
	if resume, err = n.pauseWALReceiver(pid); err != nil {
		return nil, err
	}
	n.f.logf("paused the WAL receiver of %s (pid %d)", n.name, pid)
	return resume, nil
}

// pauseWALReceiver stops (SIGSTOP) pid, the WAL receiver of this node, and
// returns what continues it (SIGCONT; gone already is fine).
func (n *Node) pauseWALReceiver(pid int) (resume func() error, err error) {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("pause WAL receiver of %s: %w", n.name, err)
	}
	return func() error {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("resume WAL receiver of %s: %w", n.name, err)
		}
		return nil
	}, nil
}

// KillWALReceiver kills the WAL receiver of this node, a standby, with
// SIGKILL, paused or not. Whatever the primary had streamed to it that it
// had not yet written is lost with its socket; its postmaster takes the
// abnormal exit for a crash, restarts its processes, and recovery goes on
// from the WAL on disk, a new receiver fetching the rest from the primary
// if it is still there.
func (n *Node) KillWALReceiver() error {
	pid, err := n.walReceiverPID()
	if err != nil {
		return fmt.Errorf("kill WAL receiver of %s: %w", n.name, err)
	}
	if err := n.killWALReceiver(pid); err != nil {
		return err
	}
	n.f.logf("killed the WAL receiver of %s (pid %d)", n.name, pid)
	return nil
}

// killWALReceiver kills (SIGKILL) pid, the WAL receiver of this node.
func (n *Node) killWALReceiver(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill WAL receiver of %s: %w", n.name, err)
	}
	return nil
}

// walReceiverPID finds the WAL receiver among the postmaster's children by
// its process title ("postgres: walreceiver streaming 0/3000110", with the
// cluster name after "postgres: " when one is set).
func (n *Node) walReceiverPID() (int, error) {
	pm, ok := n.postmasterPID()
	if !ok {
		return 0, errors.New("PostgreSQL is not running")
	}
	for _, pid := range children(pm) {
		title, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil || !bytes.HasPrefix(title, []byte("postgres: ")) {
			continue
		}
		for word := range bytes.FieldsSeq(title) {
			if string(bytes.TrimRight(word, "\x00")) == "walreceiver" {
				return pid, nil
			}
		}
	}
	return 0, errors.New("no WAL receiver running (is it a standby, streaming?)")
}

// waitWALReceiver waits until this node has a WAL receiver and returns its
// pid: after a restart, the standby starts one only once recovery has
// reached the end of the WAL on disk.
func (n *Node) waitWALReceiver(ctx context.Context) (int, error) {
	for {
		pid, err := n.walReceiverPID()
		if err == nil {
			return pid, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s: %w: %w", n.name, err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
