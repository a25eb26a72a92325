package localpg

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// watchdogs holds the write ends of the watchdogs' pipes. They are never
// closed: the kernel closes them when this process exits, and the end of file
// that follows is the watchdogs' signal. Holding them here also keeps the
// garbage collector from closing them earlier.
var watchdogs struct {
	sync.Mutex
	pipes []*os.File
}

// watchdogScript waits for the end of its input, then stops whichever server
// the pid file of cluster $1 names at that moment, waits for it to go and
// deletes the cluster's files. A missing pid file means the server was
// stopped already and that nothing must be signalled.
const watchdogScript = `
cat >/dev/null
if pid=$(head -n 1 "$1/postmaster.pid" 2>/dev/null) && kill -INT "$pid" 2>/dev/null; then
	i=0
	while [ $i -lt 300 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
fi
rm -rf "$1" "$1.log" "$1.sock"
`

// watch starts a process that stops the server on dataDir and deletes its
// files once this process has exited.
func watch(dataDir string) error {
	return AtExit("localpg-watchdog", watchdogScript, dataDir)
}

// AtExit starts a process, named name, that runs the shell script script
// with args once this process has exited, however it exits: the script
// first reads its input to the end, which comes when the kernel closes
// this process's end of the pipe. It is a separate process because a
// panicking test, os.Exit or SIGKILL skip every deferred call in this one.
// localpg's watchdog is one; bench/hapg's, for a whole formation,
// another.
func AtExit(name, script string, args ...string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", append([]string{"-c", script, name}, args...)...)
	cmd.Stdin = r
	cmd.Dir = "/"
	// A process group of its own, because Ctrl-C at a terminal signals the
	// whole foreground group and the watchdog must outlive what it watches.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("watchdog: %w", err)
	}
	// It outlives us; init reaps it.
	cmd.Process.Release()

	watchdogs.Lock()
	defer watchdogs.Unlock()
	watchdogs.pipes = append(watchdogs.pipes, w)
	return nil
}
