package hapg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"exactlyonce/bench/procfs"
	"exactlyonce/localpg"
)

// env is the whole environment of n's pg_autoctl commands. It is built,
// not inherited: pg_autoctl reads PGDATA, PGPORT, PGHOST and friends, which
// a test run may have set for another server, and it finds its own files
// through the XDG directories, which must be the same for every command
// about one node (create, run, stop, set, perform) or they would not find
// each other's configuration, state and pid files.
func (n *Node) env() []string {
	return []string{
		"PATH=" + n.f.bin + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + n.dir,
		"XDG_CONFIG_HOME=" + filepath.Join(n.dir, "xdg", "config"),
		"XDG_DATA_HOME=" + filepath.Join(n.dir, "xdg", "data"),
		"XDG_RUNTIME_DIR=" + filepath.Join(n.dir, "xdg", "run"),
	}
}

// autoctl runs a pg_autoctl command about n to its end, as user postgres,
// and returns its output in the error if it fails.
func (n *Node) autoctl(ctx context.Context, args ...string) error {
	cmd, err := n.command(ctx, args...)
	if err != nil {
		return err
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_autoctl %s: %w: %s", args[0], err, localpg.LastLines(out, 10))
	}
	return nil
}

// set runs pg_autoctl set about n, and again when the monitor broke a
// deadlock by failing it. The keepers' node_active calls lock their node's
// row and then the formation; a set locks the formation and then the row
// it changes; PostgreSQL ends such a cycle by failing one of the two
// (40P01), which asks to be retried, and pg_autoctl set does not retry.
func (n *Node) set(ctx context.Context, args ...string) error {
	const attempts = 5
	for attempt := 1; ; attempt++ {
		err := n.autoctl(ctx, append([]string{"set"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "deadlock detected") || attempt == attempts {
			return err
		}
		n.f.logf("%s: the monitor broke a deadlock by failing pg_autoctl set; setting again (attempt %d of %d)",
			n.name, attempt+1, attempts)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (then: %w)", err, ctx.Err())
		case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
		}
	}
}

func (n *Node) command(ctx context.Context, args ...string) (*exec.Cmd, error) {
	cmd, err := localpg.ServerCommand(ctx, "pg_autoctl", args...)
	if err != nil {
		return nil, err
	}
	cmd.Env = n.env()
	return cmd, nil
}

// keeper is a pg_autoctl service this process started and reaps.
type keeper struct {
	pid  int
	done chan struct{} // closed once it has exited and been reaped
}

// startKeeper starts a long-running pg_autoctl command for n (run, or a
// create with --run) in the background, its output appended to n's log.
// It runs in a process group of its own, so that Ctrl-C at a terminal
// reaches only us, and we stop the formation in order.
func (n *Node) startKeeper(args ...string) error {
	cmd, err := n.command(context.Background(), args...)
	if err != nil {
		return err
	}
	log, err := os.OpenFile(n.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start pg_autoctl %s: %w", args[0], err)
	}
	k := &keeper{pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		cmd.Wait() //nolint:errcheck // how it ended is in n's log
		close(k.done)
	}()
	n.mu.Lock()
	n.keeper = k
	n.mu.Unlock()
	return nil
}

// keeperPID returns the pid of n's pg_autoctl service, read from its pid
// file, whoever started it, and whether that process is alive.
func (n *Node) keeperPID() (int, bool) {
	pid, err := readPID(n.pidFile())
	if err != nil {
		return 0, false
	}
	return pid, n.ours(pid)
}

// pidFile is where pg_autoctl keeps the service's pid: under
// XDG_RUNTIME_DIR, at the path of the data directory.
func (n *Node) pidFile() string {
	return filepath.Join(n.dir, "xdg", "run", "pg_autoctl", n.pgdata(), "pg_autoctl.pid")
}

// postmasterPID returns the pid of n's postmaster and whether it is alive.
func (n *Node) postmasterPID() (int, bool) {
	pid, err := readPID(filepath.Join(n.pgdata(), "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	return pid, n.ours(pid)
}

// ours reports whether pid is a live process of n: a pid file outlives the
// process it names, and its number may since have gone to another process.
// The keeper's and the postmaster's command lines name the data directory.
func (n *Node) ours(pid int) bool {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
		if string(arg) == n.pgdata() {
			return !isZombie(pid)
		}
	}
	return false
}

func readPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: no pid on its first line", path)
	}
	return pid, nil
}

// waitGone waits until none of pids is alive.
func waitGone(ctx context.Context, pids ...int) error {
	for {
		alive := 0
		for _, pid := range pids {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) && !isZombie(pid) {
				alive++
			}
		}
		if alive == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for processes %v to exit: %w", pids, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// isZombie reports whether pid has exited and waits for its parent to reap
// it; for signals and waiting it is gone.
func isZombie(pid int) bool {
	st, err := procfs.ReadStat(pid)
	return err == nil && st.State == 'Z'
}

// logTail returns the end of n's log, where pg_autoctl says why it failed.
func (n *Node) logTail() string { return localpg.LogTail(n.logPath()) }
