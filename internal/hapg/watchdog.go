package hapg

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// watchdogs holds the write ends of the watchdogs' pipes. They are never
// closed: the kernel closes them when this process exits, and the end of
// file that follows is the watchdogs' signal. Holding them here also keeps
// the garbage collector from closing them earlier.
var watchdogs struct {
	sync.Mutex
	pipes []*os.File
}

// watchdogScript waits for the end of its input, then stops whatever runs
// in formation folder $1 at that moment: each keeper and each postmaster
// that a pid file there names, provided that process's command line still
// names the folder (a pid file outlives its process, whose number may have
// gone to another). SIGINT is a fast stop for both. It waits for them to
// go, kills what is left, and deletes the folder.
const watchdogScript = `
cat >/dev/null
pids=""
for f in $(find "$1" \( -name pg_autoctl.pid -o -name postmaster.pid \) 2>/dev/null); do
	pid=$(head -n 1 "$f" 2>/dev/null)
	case "$pid" in ''|*[!0-9]*) continue ;; esac
	if tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$1/" && kill -INT "$pid" 2>/dev/null; then
		pids="$pids $pid"
	fi
done
i=0
while [ $i -lt 300 ]; do
	alive=""
	for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
	[ -z "$alive" ] && break
	sleep 0.1
	i=$((i+1))
done
for pid in $pids; do kill -KILL "$pid" 2>/dev/null; done
rm -rf "$1"
`

// watch starts a process that stops the formation in dir and deletes it
// once this process has exited. It is a separate process because a
// panicking test, os.Exit or SIGKILL skip every deferred call in this one.
func watch(dir string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "hapg-watchdog", dir)
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
