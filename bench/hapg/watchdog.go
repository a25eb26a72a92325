package hapg

import "exactlyonce/localpg"

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
// once this process has exited (localpg.AtExit).
func watch(dir string) error {
	return localpg.AtExit("hapg-watchdog", watchdogScript, dir)
}
