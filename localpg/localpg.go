// Package localpg runs a PostgreSQL server from the programs installed on the
// machine, so that development and tests need neither Docker nor a server set
// up by hand. The server listens only on a Unix socket in a directory of its
// own, which no TCP port can clash with, and trusts every connection made
// through it: it is for local use only.
package localpg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Options say where a server keeps its data and how it runs.
type Options struct {
	// DataDir holds the cluster. The server log (DataDir+".log") and the
	// socket directory (DataDir+".sock", or one under /tmp when that path is
	// too long for a socket) are kept beside it.
	DataDir string
	// Throwaway trades durability for speed (no fsync) and ties a cluster
	// that Start creates to this process: once the process exits, however it
	// exits, the server is stopped and its files deleted. It is meant for
	// tests. An existing cluster is never deleted.
	Throwaway bool
	// CrashSafe, with Throwaway, keeps synchronous commits, so that a
	// Crash loses no committed transaction, as on a production server.
	// fsync stays off: only a crash of the machine, not of the server,
	// would lose what it skips.
	CrashSafe bool
	// MaxConnections, if not 0, replaces the server's max_connections
	// (100 by default), for a server that many test binaries share.
	MaxConnections int
	// Settings are more server settings, name to value, such as
	// shared_preload_libraries: pg_stat_statements for a load test that
	// counts the statements an operation costs.
	Settings map[string]string
	// Log, if not nil, receives a line for each step taken.
	Log io.Writer
}

// Server is a PostgreSQL server started from the machine's binaries.
type Server struct {
	run       runner
	dataDir   string
	socketDir string
	port      int
}

// Start makes sure a server is running on opts.DataDir and returns it. It is
// idempotent: a running server is reused, a stopped cluster is started, and
// only a missing or empty directory is initialized. Unless Throwaway, the
// server keeps running after this process exits, for the next Start to reuse.
//
// PostgreSQL refuses to run as root, so as root the server runs as the OS
// user postgres, which must be able to reach DataDir (see UsableDataDir).
func Start(ctx context.Context, opts Options) (*Server, error) {
	s, err := start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	return s, nil
}

func start(ctx context.Context, opts Options) (*Server, error) {
	r, err := newRunner()
	if err != nil {
		return nil, err
	}
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	logFile := dataDir + ".log"
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "localpg: "+format+"\n", args...)
		}
	}

	if r.running(ctx, dataDir) {
		logf("PostgreSQL already running in %s", dataDir)
		return attach(r, dataDir)
	}

	if r.owner != nil {
		// Caught here, the problem gets a message that names its cause;
		// initdb would only report a permission error on some path.
		if b := blocker(dataDir, *r.owner); b != "" {
			return nil, fmt.Errorf("user postgres cannot enter %s, so cannot reach %s: choose a data directory with UsableDataDir", b, dataDir)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o755); err != nil {
		return nil, err
	}

	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); errors.Is(err, fs.ErrNotExist) {
		entries, err := os.ReadDir(dataDir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if len(entries) > 0 {
			return nil, fmt.Errorf("%s is neither empty nor a PostgreSQL cluster", dataDir)
		}
		if opts.Throwaway {
			// Armed before initdb so that even a failed start leaves
			// nothing behind.
			if err := watch(dataDir); err != nil {
				return nil, err
			}
		}
		logf("initializing a PostgreSQL cluster in %s", dataDir)
		if err := initdb(ctx, r, dataDir, opts.Throwaway); err != nil {
			return nil, err
		}
	}

	socketDir, err := makeSocketDir(r, dataDir)
	if err != nil {
		return nil, err
	}
	// pg_ctl runs as the server's user and could not create the log in a
	// directory that belongs to root.
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	if err := r.own(logFile); err != nil {
		return nil, err
	}

	// pg_ctl hands -o to a shell, hence the quoting.
	settings := "-c listen_addresses='' -p 5432 -k " + shellQuote(socketDir) + " -c unix_socket_permissions=0700"
	if opts.Throwaway {
		settings += " -c fsync=off -c full_page_writes=off"
		if !opts.CrashSafe {
			settings += " -c synchronous_commit=off"
		}
	}
	if opts.MaxConnections > 0 {
		settings += " -c max_connections=" + strconv.Itoa(opts.MaxConnections)
	}
	for _, name := range slices.Sorted(maps.Keys(opts.Settings)) {
		settings += " -c " + shellQuote(name+"="+opts.Settings[name])
	}
	// -l matters beyond logging: without it the server would inherit our
	// output pipe and the command would never be seen to finish.
	if err := r.run(ctx, "pg_ctl", "start", "-D", dataDir, "-l", logFile, "-w", "-t", "60", "-s", "-o", settings); err != nil {
		return nil, fmt.Errorf("%w%s", err, LogTail(logFile))
	}
	logf("started PostgreSQL in %s (log: %s)", dataDir, logFile)
	return attach(r, dataDir)
}

// initdb creates a cluster whose superuser is postgres, reachable without a
// password, in the C locale so that sorting does not depend on the machine.
func initdb(ctx context.Context, r runner, dataDir string, throwaway bool) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	if err := r.own(dataDir); err != nil {
		return err
	}
	args := []string{"-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"}
	if throwaway {
		args = append(args, "--no-sync")
	}
	return r.run(ctx, "initdb", args...)
}

// maxSocketPath leaves room below the 107 bytes Linux allows for a socket
// path (macOS allows 103).
const maxSocketPath = 100

// makeSocketDir creates the private directory the server puts its socket in.
// It is private because trust authentication lets anyone who can reach the
// socket in as superuser.
func makeSocketDir(r runner, dataDir string) (string, error) {
	dir := dataDir + ".sock"
	if len(dir+"/.s.PGSQL.5432") > maxSocketPath {
		// A running server's socket directory is read back from its pid
		// file, so this one need not be found again by name.
		var err error
		if dir, err = os.MkdirTemp("/tmp", "localpg-"); err != nil {
			return "", err
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, r.own(dir)
}

// attach describes the server running on dataDir. Where it listens is read
// from its postmaster.pid (line 4 the port, line 5 the socket directory), so
// a server started earlier, even with other settings, is found as it is.
func attach(r runner, dataDir string) (*Server, error) {
	pid, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(pid), "\n")
	if len(lines) < 5 || lines[4] == "" {
		return nil, fmt.Errorf("%s/postmaster.pid names no socket directory", dataDir)
	}
	port, err := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err != nil {
		return nil, fmt.Errorf("%s/postmaster.pid: port: %w", dataDir, err)
	}
	return &Server{run: r, dataDir: dataDir, socketDir: lines[4], port: port}, nil
}

// URL returns a connection string for database on the server, as the
// superuser postgres, in the form pgx and psql accept.
func (s *Server) URL(database string) string {
	// The port is spelled out because it names the socket file, and pgx
	// would otherwise take it from PGPORT.
	q := url.Values{"host": {s.socketDir}, "port": {strconv.Itoa(s.port)}, "sslmode": {"disable"}}
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + database, RawQuery: q.Encode()}
	return u.String()
}

// Stop shuts the server down, disconnecting clients, and waits until it has.
// Stopping a server that is not running does nothing.
func (s *Server) Stop(ctx context.Context) error {
	if !s.run.running(ctx, s.dataDir) {
		return nil
	}
	if err := s.run.run(ctx, "pg_ctl", "stop", "-D", s.dataDir, "-m", "fast", "-w", "-s"); err != nil {
		return fmt.Errorf("stop postgres: %w", err)
	}
	return nil
}

// LogTail returns the last 20 lines of the log at path, after a newline
// and the path, to append to an error: a server's log says why a start
// failed, where pg_ctl (or pg_autoctl, in bench/hapg) only says that it
// failed. It returns "" when the log is missing or empty.
func LogTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	return "\n" + path + ":\n" + LastLines(b, 20)
}

// LastLines returns the last n lines of a command's output or a log,
// without the trailing newline.
func LastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Crash stops the server the way a power cut would, as far as clients can
// tell: `pg_ctl stop -m immediate` kills every backend without a checkpoint,
// and the next Start replays the write-ahead log. It is for tests and the
// chaos harness, which prove that nothing committed is lost and nothing
// half-done survives. Crashing a server that is not running does nothing.
func (s *Server) Crash(ctx context.Context) error {
	if !s.run.running(ctx, s.dataDir) {
		return nil
	}
	if err := s.run.run(ctx, "pg_ctl", "stop", "-D", s.dataDir, "-m", "immediate", "-w", "-s"); err != nil {
		return fmt.Errorf("crash postgres: %w", err)
	}
	return nil
}
