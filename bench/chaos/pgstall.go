package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"exactlyonce/bench/procfs"
)

// stallPostgresOnce is one PostgreSQL stall of the drive, recorded in t.
func (cl *cluster) stallPostgresOnce(ctx context.Context, t *tally, logf func(string, ...any)) {
	var began time.Time
	err := cl.stallPostgres(ctx, cl.cfg.DBStall, func(n int) {
		began = time.Now()
		logf("SIGSTOP of PostgreSQL's %d processes for %s", n, cl.cfg.DBStall)
		t.count(func(d *Disruptions) { d.DBStalls++ })
	})
	switch {
	case errors.Is(err, errDriveOver):
		logf("no PostgreSQL stall: %v", err)
	case err != nil:
		t.fail("stall PostgreSQL", err)
	default:
		t.span(windowDBStall, began)
		logf("SIGCONT PostgreSQL")
	}
}

// stallPostgres stops every process of the run's PostgreSQL server, the
// postmaster and all it forked (backends, walwriter, checkpointer, …),
// with SIGSTOP for hold, then lets them go on with SIGCONT: a server that
// answers nothing and refuses nothing, as a frozen VM or a storage stall
// would make it, which no crash imitates. Connections stay open, so a
// statement waits until its context gives up, and a new connection waits
// in the socket's backlog. stopped is told how many processes it stopped,
// once they are.
//
// It waits for a crash of PostgreSQL to end first, and gives up when ctx
// (the drive) ended meanwhile. Only the server the harness started is
// touched: its postmaster is the pid its own data folder's postmaster.pid
// names, checked to be a running postgres, and the rest are that pid's
// children.
func (cl *cluster) stallPostgres(ctx context.Context, hold time.Duration, stopped func(n int)) error {
	cl.pgMu.Lock()
	defer cl.pgMu.Unlock()
	if ctx.Err() != nil {
		return errDriveOver
	}
	dataDir, err := filepath.Abs(cl.pgOpts.DataDir)
	if err != nil {
		return err
	}
	postmaster, err := postmasterPid(dataDir)
	if err != nil {
		return err
	}
	var pids []int
	// Always resumed, children first: a stall that failed half-way must
	// not leave a server half-frozen for the rest of the run.
	defer func() {
		for i := len(pids) - 1; i >= 0; i-- {
			syscall.Kill(pids[i], syscall.SIGCONT) // gone already: nothing to resume
		}
	}()
	// The postmaster first, and only once it is seen stopped the children:
	// a stopped postmaster forks no new process that the list would miss.
	if err := syscall.Kill(postmaster, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("SIGSTOP postmaster %d: %w", postmaster, err)
	}
	pids = append(pids, postmaster)
	if err := waitStopped(postmaster, 2*time.Second); err != nil {
		return err
	}
	// A fork under way as the postmaster stopped may show its child a
	// moment later: look again until a pass finds nobody new.
	seen := map[int]bool{postmaster: true}
	for pass := 0; pass < 5; pass++ {
		fresh := 0
		for _, pid := range childrenOf(postmaster) {
			if seen[pid] {
				continue
			}
			seen[pid] = true
			if err := syscall.Kill(pid, syscall.SIGSTOP); err == nil {
				pids = append(pids, pid)
				fresh++
			}
		}
		if fresh == 0 && pass > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopped(len(pids))
	time.Sleep(hold)
	return nil
}

// postmasterPid is the pid in dataDir's postmaster.pid, if it is a running
// postgres process: a stale file after a crash may name anybody's process.
func postmasterPid(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("postmaster pid: %w", err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(string(bytes.TrimSpace(line)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("postmaster pid: bad first line %q", line)
	}
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return 0, fmt.Errorf("postmaster pid %d: %w", pid, err)
	}
	if st.Comm != "postgres" {
		return 0, fmt.Errorf("postmaster pid %d is %q, not postgres", pid, st.Comm)
	}
	return pid, nil
}

// waitStopped waits until pid's state is stopped (T): SIGSTOP is delivered
// asynchronously, and a process still running could fork meanwhile.
func waitStopped(pid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		st, err := procfs.ReadStat(pid)
		if err != nil {
			return fmt.Errorf("wait for %d to stop: %w", pid, err)
		}
		if st.State == 'T' || st.State == 't' {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d not stopped after %s (state %c)", pid, limit, st.State)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// childrenOf lists the processes whose parent is ppid, from /proc.
func childrenOf(ppid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := procfs.ReadStat(pid); err == nil && st.PPID == ppid {
			pids = append(pids, pid)
		}
	}
	return pids
}
