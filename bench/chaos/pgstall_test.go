package chaos

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestChildrenOfAndWaitStopped: the children of a process started here are
// found through /proc, and a SIGSTOP is seen to take effect.
func TestChildrenOfAndWaitStopped(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range childrenOf(cmd.Process.Pid) {
			syscall.Kill(pid, syscall.SIGKILL) // the sleeps started here
		}
		cmd.Process.Kill()
		cmd.Wait() //nolint:errcheck // killed: its status says only that
	})
	var kids []int
	for deadline := time.Now().Add(5 * time.Second); len(kids) < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		kids = childrenOf(cmd.Process.Pid)
	}
	if len(kids) != 2 {
		t.Fatalf("got children %v, want the two sleeps", kids)
	}
	if slices.Contains(kids, cmd.Process.Pid) {
		t.Errorf("children %v include the parent", kids)
	}
	if err := syscall.Kill(kids[0], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := waitStopped(kids[0], 2*time.Second); err != nil {
		t.Error(err)
	}
	syscall.Kill(kids[0], syscall.SIGCONT)
}

// TestPostmasterPidRefusesOthers: a pid file naming a process that is not
// postgres (a stale file, a reused pid) is refused.
func TestPostmasterPidRefusesOthers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := strconv.Itoa(os.Getpid()) + "\n/tmp/pg\n1\n5432\n/tmp/sock\n"
	if err := os.WriteFile(filepath.Join(dir, "postmaster.pid"), []byte(pidFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if pid, err := postmasterPid(dir); err == nil {
		t.Errorf("got pid %d for the test binary, want a refusal", pid)
	}
	if _, err := postmasterPid(t.TempDir()); err == nil {
		t.Error("no pid file: want an error")
	}
}
