// Command testpg starts one throwaway PostgreSQL, runs a command with
//
//	TEST_DATABASE_URL  a superuser URL of that server
//
// and, when the command ends, stops the server and deletes its files, then
// exits with the command's status. `make test` runs the whole run under it,
// so that every test package shares one server (each copies template
// databases of its own on it; see internal/pgtest and idem/idemtest) instead
// of starting one per test binary:
//
//	go run ./cmd/testpg -- go test ./idem/...
//
// SIGINT, SIGTERM and SIGHUP are passed on to the command, and the server is
// removed once it has ended. Should testpg itself be killed, the server's
// watchdog (localpg, Throwaway) stops and deletes it all the same.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"exactlyonce/localpg"
)

// maxConnections leaves room for test binaries running side by side, each
// with pools of its own, where each used to have a server to itself.
const maxConnections = 500

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(os.Stderr, "usage: testpg -- command [args...]")
		os.Exit(2)
	}
	code, err := run(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testpg:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// run returns the command's exit status, and an error about the server,
// which fails the run only if the command itself succeeded.
func run(args []string) (code int, err error) {
	// Caught from the start, so that a Ctrl-C during the server's start
	// does not kill testpg before it can clean up.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)

	// Under /tmp, not TMPDIR, which can be too long a path for the socket or
	// out of the server user's reach.
	dir, err := os.MkdirTemp("/tmp", "testpg-")
	if err != nil {
		return 1, err
	}
	began := time.Now()
	srv, err := localpg.Start(context.Background(), localpg.Options{
		DataDir: dir, Throwaway: true, MaxConnections: maxConnections,
	})
	if err != nil {
		removeCluster(dir)
		return 1, err
	}
	defer func() {
		if stopErr := srv.Stop(context.Background()); stopErr != nil && err == nil {
			err = stopErr
		}
		removeCluster(dir)
	}()
	url := srv.URL("postgres")
	fmt.Fprintf(os.Stderr, "testpg: PostgreSQL in %s (%.1fs), TEST_DATABASE_URL=%s\n", dir, time.Since(began).Seconds(), url)

	select {
	case sig := <-signals:
		return exitStatus(sig), fmt.Errorf("%v before the command started", sig)
	default:
	}

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(withoutVars(os.Environ(), "TEST_DATABASE_URL", "TEST_ADMIN_DATABASE_URL"),
		"TEST_DATABASE_URL="+url)
	if err := cmd.Start(); err != nil {
		return 127, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-signals:
			// A Ctrl-C at a terminal reaches the command's process group
			// too; a SIGTERM from a CI runner reaches only us.
			cmd.Process.Signal(sig)
		case err := <-done:
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return exitStatus(ws.Signal()), nil
				}
				return exit.ExitCode(), nil
			}
			if err != nil {
				return 1, err
			}
			return 0, nil
		}
	}
}

// removeCluster deletes the cluster and what localpg keeps beside it. The
// watchdog would do it too once testpg exits, but behind its back.
func removeCluster(dir string) {
	for _, p := range []string{dir, dir + ".log", dir + ".sock"} {
		if err := os.RemoveAll(p); err != nil {
			fmt.Fprintln(os.Stderr, "testpg:", err)
		}
	}
}

// exitStatus is the status a shell reports for a command killed by sig.
func exitStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

func withoutVars(env []string, names ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			if name == n {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}
