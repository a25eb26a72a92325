package idemtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func TestNewPoolIsMigratedAndDropped(t *testing.T) {
	var name string
	t.Run("user", func(t *testing.T) {
		pool := NewPool(t)
		var n int
		if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM idem_keys").Scan(&n); err != nil {
			t.Fatalf("idem_keys: %v", err)
		}
		if err := pool.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	pool := NewPool(t)
	var n int
	if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("got %d databases named %s after the test that made it, want 0", n, name)
	}
	if _, err := pgx.ParseConfig(NewDatabase(t)); err != nil {
		t.Errorf("NewDatabase: %v", err)
	}
}

// Without TEST_DATABASE_URL, a test binary starts a server of its own and
// leaves nothing behind: Main stops it and deletes its folder when the tests
// end, and the watchdog does when the binary is killed instead.
func TestServerOfItsOwn(t *testing.T) {
	if how := os.Getenv("IDEMTEST_CHILD"); how != "" {
		// The child: Main has started the server, as TEST_DATABASE_URL is
		// unset; say where it is, then end as asked.
		pid, err := os.ReadFile(filepath.Join(local.srv.dir, "data", "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		NewPool(t) // the server serves
		fmt.Println(local.srv.dir, strings.SplitN(string(pid), "\n", 2)[0])
		if how == "kill" {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return
	}
	for _, how := range []string{"exit", "kill"} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestServerOfItsOwn$", "-test.count=1")
			cmd.Env = append(os.Environ(), "IDEMTEST_CHILD="+how, envURL+"=", envAdminURL+"=")
			out, err := cmd.Output()
			if how == "exit" && err != nil || how == "kill" && err == nil {
				t.Fatalf("child: got %v, want it to %s; output:\n%s", err, how, out)
			}
			var dir string
			var pid int
			if _, err := fmt.Sscan(string(out), &dir, &pid); err != nil || !strings.HasPrefix(dir, "/tmp/idemtest-") {
				t.Fatalf("child printed %q, want its server's folder and pid", out)
			}
			wait := 30 * time.Second
			if how == "exit" {
				wait = 0 // Main removed it before the child exited
			}
			for deadline := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
				_, err := os.Stat(dir)
				if errors.Is(err, os.ErrNotExist) && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after the child's %s: %s still there (%v) or server %d still running", how, dir, err, pid)
				}
			}
		})
	}
}
