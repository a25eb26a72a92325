package localpg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// defaultBin is where Debian's and Ubuntu's postgresql-15 package installs
// the server programs, which it keeps off PATH.
const defaultBin = "/usr/lib/postgresql/15/bin"

// runner runs the server programs as the user the server belongs to.
type runner struct {
	bin   string
	owner *account // nil: ourselves
}

func newRunner() (runner, error) {
	bin, err := findBin()
	if err != nil {
		return runner{}, err
	}
	owner, err := serverAccount()
	if err != nil {
		return runner{}, err
	}
	return runner{bin: bin, owner: owner}, nil
}

// findBin returns the directory holding initdb, pg_ctl and postgres: PG_BIN
// if set, else Debian's location, else wherever PATH finds pg_ctl (Homebrew,
// Fedora).
func findBin() (string, error) {
	dirs := []string{os.Getenv("PG_BIN")}
	if dirs[0] == "" {
		dirs[0] = defaultBin
		if p, err := exec.LookPath("pg_ctl"); err == nil {
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	for _, dir := range dirs {
		if hasServer(dir) {
			return dir, nil
		}
	}
	if os.Getenv("PG_BIN") != "" {
		return "", fmt.Errorf("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in PG_BIN=%s", dirs[0])
	}
	return "", fmt.Errorf("PostgreSQL server binaries not found in %s: install them with \"apt-get install -y postgresql-15\" or set PG_BIN", defaultBin)
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if !isExecutable(filepath.Join(dir, name)) {
			return false
		}
	}
	return true
}

// command returns a command that runs the program at path as the server's
// user, from /.
func (r runner) command(ctx context.Context, path string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, path, args...)
	// The programs locate themselves through the working directory and fail
	// when the server's user cannot enter it, as with a checkout under /root.
	cmd.Dir = "/"
	if r.owner != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
			Uid: r.owner.uid, Gid: r.owner.gid, Groups: r.owner.groups,
		}}
	}
	return cmd
}

// run runs a server program and returns its output in the error if it fails.
func (r runner) run(ctx context.Context, name string, args ...string) error {
	cmd := r.command(ctx, filepath.Join(r.bin, name), args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, bytes.TrimSpace(out))
	}
	return nil
}

// running reports whether a server is running on dataDir.
func (r runner) running(ctx context.Context, dataDir string) bool {
	// pg_ctl status exits 0 only for a running server (3 stopped, 4 no
	// cluster), and tells a live server from a stale pid file.
	return r.run(ctx, "pg_ctl", "status", "-D", dataDir) == nil
}

// own gives paths to the server's user, which must be able to write there.
func (r runner) own(paths ...string) error {
	if r.owner == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Chown(p, int(r.owner.uid), int(r.owner.gid)); err != nil {
			return err
		}
	}
	return nil
}

// account is an OS user, as far as file permissions are concerned.
type account struct {
	uid, gid uint32
	groups   []uint32 // supplementary
}

// serverAccount returns the OS user the server runs as, or nil when that is
// us. PostgreSQL refuses to run as root, so as root it runs as the user
// postgres that the distributions' packages create.
func serverAccount() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL will not run as root and there is no OS user postgres to run it as: %w", err)
	}
	var a account
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	gids, err3 := u.GroupIds()
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("look up user postgres: %w", err)
	}
	a.uid, a.gid = uint32(uid), uint32(gid)
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			a.groups = append(a.groups, uint32(n))
		}
	}
	return &a, nil
}
