package idemtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// A test binary run without TEST_DATABASE_URL starts a PostgreSQL of its own
// from the machine's server programs, so that `go test ./...` needs nothing
// but PostgreSQL installed. The server is throwaway: in a folder under /tmp,
// listening only on a Unix socket in that folder (no port to clash with,
// trust authentication reachable by no one else), without fsync. Main stops
// it and deletes the folder when the tests end; a watchdog process does the
// same when the binary dies without getting there (a panic, a -timeout, a
// kill).

// local is the server this test binary started, if any.
var local struct {
	once sync.Once
	srv  *server
	err  error
}

// localURL starts this binary's server the first time it is called and
// returns its superuser URL.
func localURL() (string, error) {
	local.once.Do(func() { local.srv, local.err = startServer(context.Background()) })
	if local.err != nil {
		return "", local.err
	}
	return local.srv.url, nil
}

// stopLocal stops this binary's server, if it started one.
func stopLocal() {
	if local.srv != nil {
		local.srv.stop()
	}
}

type server struct {
	dir    string    // the cluster (dir/data), its socket and its log
	url    string    // superuser URL of the database postgres
	cmd    *exec.Cmd // the postmaster
	exited chan struct{}
}

func startServer(ctx context.Context) (*server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	owner, err := serverUser()
	if err != nil {
		return nil, err
	}
	// /tmp rather than TMPDIR: a socket path must stay under about 100
	// bytes, and the user postgres must be able to enter every folder on
	// the way, which a home directory such as /root forbids.
	dir, err := os.MkdirTemp("/tmp", "idemtest-")
	if err != nil {
		return nil, fmt.Errorf("idemtest: %w", err)
	}
	// Armed before anything else, so that a failed start leaves nothing.
	if err := watch(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s, err := start(ctx, bin, owner, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("idemtest: start PostgreSQL from %s: %w", bin, err)
	}
	return s, nil
}

func start(ctx context.Context, bin string, owner *syscall.Credential, dir string) (*server, error) {
	if owner != nil {
		if err := os.Chown(dir, int(owner.Uid), int(owner.Gid)); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := program(bin, "initdb", owner, "-D", data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, strings.TrimSpace(string(out)))
	}
	logPath := filepath.Join(dir, "postgres.log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close() // the child has its own copy
	cmd := program(bin, "postgres", owner, "-D", data, "-k", dir, "-c", "listen_addresses=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	cmd.Stdout, cmd.Stderr = log, log
	// A process group of its own: a Ctrl-C at the terminal stops the test
	// binary, whose watchdog then stops the server, rather than both at
	// once in no particular order.
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{dir: dir, cmd: cmd, exited: make(chan struct{}),
		url: "postgres://postgres@/postgres?host=" + dir + "&port=5432&sslmode=disable"}
	go func() { cmd.Wait(); close(s.exited) }() //nolint:errcheck // how it ended is in its log
	if err := s.ready(ctx); err != nil {
		s.stop()
		b, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("%w\n%s", err, strings.TrimSpace(string(b)))
	}
	return s, nil
}

// ready waits until the server accepts connections.
func (s *server) ready(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		connCtx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := pgx.Connect(connCtx, s.url)
		cancel()
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-s.exited:
			return errors.New("postgres exited")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after a minute: %w", err)
		}
	}
}

// stop shuts the server down (a fast shutdown, which disconnects the
// sessions tests left open) and deletes its folder.
func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGINT) // it may have exited already
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	os.RemoveAll(s.dir)
}

// program is one of the server's programs, run as owner (nil: as this
// process) from a folder owner can enter: initdb and postgres look for
// themselves through the working directory.
func program(bin, name string, owner *syscall.Credential, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: owner}
	return cmd
}

// debianBins is where Debian's and Ubuntu's packages install each version's
// server programs, off PATH.
const debianBins = "/usr/lib/postgresql/*/bin"

// findBin returns the folder holding initdb and postgres: PG_BIN when set,
// else the newest version under debianBins, else the one PATH finds initdb in
// (Homebrew, Fedora).
func findBin() (string, error) {
	if bin := os.Getenv("PG_BIN"); bin != "" {
		if !hasServer(bin) {
			return "", fmt.Errorf("idemtest: TEST_DATABASE_URL is not set, and PG_BIN=%s holds no initdb and postgres", bin)
		}
		return bin, nil
	}
	dirs, _ := filepath.Glob(debianBins) // the pattern is well formed
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, dir := range dirs {
		if hasServer(dir) {
			return dir, nil
		}
	}
	return "", errors.New(errNoServer)
}

// versionOf reads the major version out of /usr/lib/postgresql/15/bin.
func versionOf(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// serverUser is whom the server runs as: this process, except as root,
// which PostgreSQL refuses to run as; then the user postgres that the
// distributions' packages create.
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("idemtest: PostgreSQL will not run as root, and there is no user postgres to run it as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("idemtest: user postgres: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// watchdogs holds the write ends of the watchdogs' pipes, open until this
// process exits, however it exits: the end of file that follows is their
// signal. Held here, they are never closed by the garbage collector either.
var watchdogs struct {
	sync.Mutex
	pipes []*os.File
}

// watchdogScript waits for the end of its input, then stops the server whose
// pid file is in $1/data, if it still runs, and deletes $1.
const watchdogScript = `
cat >/dev/null
if pid=$(head -n 1 "$1/data/postmaster.pid" 2>/dev/null) && kill -INT "$pid" 2>/dev/null; then
	i=0
	while [ $i -lt 300 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
fi
rm -rf "$1"
`

// watch starts the process that stops the server in dir and deletes dir once
// this process has exited. It is a process of its own because a panicking
// test, os.Exit and a kill skip every deferred call in this one.
func watch(dir string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("idemtest: watchdog: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "idemtest-watchdog", dir)
	cmd.Stdin, cmd.Dir = r, "/"
	// Its own process group, so that a Ctrl-C that stops the tests does
	// not stop it too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("idemtest: watchdog: %w", err)
	}
	cmd.Process.Release() // it outlives us; init reaps it
	watchdogs.Lock()
	defer watchdogs.Unlock()
	watchdogs.pipes = append(watchdogs.pipes, w)
	return nil
}
