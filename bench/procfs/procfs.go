// Package procfs reads a process's /proc/<pid>/stat on Linux: its command
// name, state and parent, which the chaos harness (bench/chaos) and the
// formation runner (bench/hapg) need to tell a process from a stale pid,
// a stopped process from a running one, and a zombie from a live one.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Stat is what is read of /proc/<pid>/stat.
type Stat struct {
	Comm  string
	State byte // R, S, D, T (stopped), t (traced), Z (zombie), …
	PPID  int
}

// ReadStat reads /proc/<pid>/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b)
}

// ParseStat reads "pid (comm) state ppid …". The command name may hold
// spaces and parentheses itself, so it runs to the last ')'.
func ParseStat(b []byte) (Stat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Stat{}, errors.New("stat: no command name")
	}
	fields := bytes.Fields(b[end+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return Stat{}, errors.New("stat: no state and parent")
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	if err != nil {
		return Stat{}, fmt.Errorf("stat: parent: %w", err)
	}
	return Stat{Comm: string(b[open+1 : end]), State: fields[0][0], PPID: ppid}, nil
}
