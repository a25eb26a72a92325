// Package pgbouncer runs Debian's PgBouncer (1.18) in transaction pooling in
// front of a PostgreSQL server, for the PgBouncer test leg and the load test.
// Like localpg it is for local use only: it listens on loopback and trusts
// every client.
//
// PgBouncer refuses to run as root, so as root it runs as the OS user
// postgres, the user localpg runs the server as.
package pgbouncer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Bouncer is a running PgBouncer.
type Bouncer struct {
	cmd  *exec.Cmd
	dir  string
	port int
	done chan struct{}
	err  error
}

// Options say how the pooler runs.
type Options struct {
	// PoolSize is default_pool_size: server connections per database and
	// user. Zero means 20.
	PoolSize int
}

// Start runs PgBouncer in transaction pooling in front of the server that
// backendURL (a localpg URL, or any postgres:// URL with host and port)
// reaches, for every database on it (the "*" fallback). It returns once
// PgBouncer accepts connections; Stop ends it, and it also ends with this
// process.
func Start(ctx context.Context, backendURL string, opts Options) (*Bouncer, error) {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		if _, e := os.Stat("/usr/sbin/pgbouncer"); e != nil {
			return nil, errors.New("pgbouncer not found: install it with apt-get install -y pgbouncer")
		}
		bin = "/usr/sbin/pgbouncer"
	}
	host, port, pgUser, err := backend(backendURL)
	if err != nil {
		return nil, err
	}
	if opts.PoolSize == 0 {
		opts.PoolSize = 20
	}
	listen, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("/tmp", "pgbouncer-")
	if err != nil {
		return nil, err
	}
	// The "*" line sends every database name to the server, so databases
	// created after the start (each test's) are reachable too.
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%d user=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 2000
ignore_startup_parameters = extra_float_digits
logfile = %s
pidfile = %s
admin_users = %s
`, host, port, pgUser, listen, filepath.Join(dir, "userlist.txt"), opts.PoolSize,
		filepath.Join(dir, "pgbouncer.log"), filepath.Join(dir, "pgbouncer.pid"), pgUser)
	files := map[string]string{"pgbouncer.ini": ini, "userlist.txt": fmt.Sprintf("%q \"\"\n", pgUser)}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if os.Geteuid() == 0 {
		uid, gid, err := account("postgres")
		if err != nil {
			return nil, err
		}
		for _, p := range []string{dir, filepath.Join(dir, "pgbouncer.ini"), filepath.Join(dir, "userlist.txt")} {
			if err := os.Chown(p, uid, gid); err != nil {
				return nil, err
			}
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pgbouncer: %w", err)
	}
	b := &Bouncer{cmd: cmd, dir: dir, port: listen, done: make(chan struct{})}
	go func() { b.err = cmd.Wait(); close(b.done) }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", b.addr(), time.Second)
		if err == nil {
			c.Close()
			return b, nil
		}
		select {
		case <-b.done:
			return nil, fmt.Errorf("pgbouncer exited: %v%s", b.err, b.logTail())
		case <-ctx.Done():
			b.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Stop()
			return nil, fmt.Errorf("pgbouncer did not listen within 15s%s", b.logTail())
		}
	}
}

func (b *Bouncer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port)) }

// URL returns a URL of database through PgBouncer, as user postgres, with
// pgx's query exec mode set to one PgBouncer 1.18 can run (unnamed
// statements; it has no protocol-level prepared statements).
func (b *Bouncer) URL(database string) string {
	q := url.Values{"sslmode": {"disable"}, "default_query_exec_mode": {"cache_describe"}}
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: b.addr(), Path: "/" + database, RawQuery: q.Encode()}
	return u.String()
}

// Port is the TCP port PgBouncer listens on at 127.0.0.1.
func (b *Bouncer) Port() int { return b.port }

// Stop ends PgBouncer and removes its files.
func (b *Bouncer) Stop() error {
	select {
	case <-b.done:
	default:
		_ = b.cmd.Process.Signal(syscall.SIGINT) // safe shutdown: wait for clients
		select {
		case <-b.done:
		case <-time.After(3 * time.Second):
			_ = b.cmd.Process.Kill()
			<-b.done
		}
	}
	return os.RemoveAll(b.dir)
}

func (b *Bouncer) logTail() string {
	out, err := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	if err != nil || len(out) == 0 {
		return ""
	}
	if len(out) > 2000 {
		out = out[len(out)-2000:]
	}
	return "\n" + string(out)
}

// backend reads host (or socket directory), port and user from a
// postgres:// URL, as localpg.Server.URL writes it.
func backend(raw string) (host string, port int, pgUser string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", 0, "", errors.New("pgbouncer: backend is not a valid URL")
	}
	host, port, pgUser = u.Hostname(), 5432, "postgres"
	if h := u.Query().Get("host"); h != "" {
		host = h
	}
	p := u.Port()
	if q := u.Query().Get("port"); q != "" {
		p = q
	}
	if p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return "", 0, "", errors.New("pgbouncer: backend port is not a number")
		}
	}
	if u.User != nil && u.User.Username() != "" {
		pgUser = u.User.Username()
	}
	if host == "" || strings.ContainsAny(host, " '\n") {
		return "", 0, "", errors.New("pgbouncer: backend URL names no usable host")
	}
	return host, port, pgUser, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func account(name string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("pgbouncer runs as user %s when started as root: %w", name, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}
