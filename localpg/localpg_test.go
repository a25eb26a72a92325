package localpg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestCanEnter(t *testing.T) {
	pg := account{uid: 101, gid: 104, groups: []uint32{104, 200}}
	tests := []struct {
		name     string
		mode     os.FileMode
		uid, gid uint32
		want     bool
	}{
		{"others may enter", 0o755, 0, 0, true},
		{"home directory of root", 0o700, 0, 0, false},
		{"owned by the user", 0o700, 101, 0, true},
		{"owner bits count for the owner", 0o077, 101, 0, false},
		{"primary group", 0o750, 0, 104, true},
		{"supplementary group", 0o750, 0, 200, true},
		{"group bits count for a member", 0o701, 0, 200, false},
		{"other group", 0o750, 0, 300, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := canEnter(os.ModeDir|tt.mode, tt.uid, tt.gid, pg); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUsableDataDir(t *testing.T) {
	// t.TempDir is mode 0700 and ours: its owner may enter, a stranger not.
	me := account{uid: uint32(os.Getuid()), gid: uint32(os.Getgid())}
	stranger := account{uid: 4242, gid: 4242}
	preferred := filepath.Join(t.TempDir(), "not", "yet", "postgres")

	t.Run("reachable directory is kept", func(t *testing.T) {
		dir, fellBack := usableDataDir(preferred, &me)
		if dir != preferred || fellBack {
			t.Errorf("got %s, %v, want %s, false", dir, fellBack, preferred)
		}
	})
	t.Run("running as ourselves keeps it", func(t *testing.T) {
		dir, fellBack := usableDataDir(preferred, nil)
		if dir != preferred || fellBack {
			t.Errorf("got %s, %v, want %s, false", dir, fellBack, preferred)
		}
	})
	t.Run("unreachable directory falls back to the same one under /tmp", func(t *testing.T) {
		dir, fellBack := usableDataDir(preferred, &stranger)
		if !fellBack || !strings.HasPrefix(dir, "/tmp/localpg-") || filepath.Base(dir) != "postgres" {
			t.Errorf("got %s, %v, want /tmp/localpg-*/postgres, true", dir, fellBack)
		}
		if again, _ := usableDataDir(preferred, &stranger); again != dir {
			t.Errorf("second call got %s, want %s", again, dir)
		}
		if other, _ := usableDataDir(preferred+"2", &stranger); other == dir {
			t.Errorf("another preferred directory got the same fallback %s", other)
		}
	})
}

func TestStartIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, err := os.MkdirTemp("/tmp", "localpg-test-")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{DataDir: dir, Throwaway: true}
	s := mustStart(t, opts)
	t.Cleanup(func() { s.Stop(context.Background()) })
	started := query[time.Time](t, s.URL("postgres"), "SELECT pg_postmaster_start_time()")
	mustExec(t, s.URL("postgres"), "CREATE TABLE kept ()")

	again := mustStart(t, opts)
	if got := query[time.Time](t, again.URL("postgres"), "SELECT pg_postmaster_start_time()"); !got.Equal(started) {
		t.Errorf("second Start: server started at %v, want the running one from %v", got, started)
	}

	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Errorf("Stop of a stopped server: %v", err)
	}
	restarted := mustStart(t, opts)
	if got := query[time.Time](t, restarted.URL("postgres"), "SELECT pg_postmaster_start_time()"); !got.After(started) {
		t.Errorf("Start after Stop: server started at %v, want after %v", got, started)
	}
	if n := query[int](t, restarted.URL("postgres"), "SELECT count(*) FROM pg_tables WHERE tablename = 'kept'"); n != 1 {
		t.Errorf("after restart: got %d tables named kept, want 1", n)
	}
}

// TestThrowawayDiesWithProcess starts a throwaway server in a child process
// that then kills itself, and checks the watchdog stops it and deletes it.
func TestThrowawayDiesWithProcess(t *testing.T) {
	if dir := os.Getenv("LOCALPG_TEST_CHILD"); dir != "" {
		mustStart(t, Options{DataDir: dir, Throwaway: true})
		pid, _ := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
		fmt.Println(strings.SplitN(string(pid), "\n", 2)[0])
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	t.Parallel()
	dir, err := os.MkdirTemp("/tmp", "localpg-test-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestThrowawayDiesWithProcess$")
	cmd.Env = append(os.Environ(), "LOCALPG_TEST_CHILD="+dir)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: got %v, want killed; output:\n%s", err, out)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("child printed %q, want the server's pid", out)
	}

	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err := os.Stat(dir)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still there 30s after its process died", dir)
		}
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d: got %v, want it gone (ESRCH)", pid, err)
	}
}

func mustStart(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := Start(tb.Context(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// query runs sql, which returns one value, on a connection of its own.
func query[T any](tb testing.TB, url, sql string) T {
	tb.Helper()
	conn, err := pgx.Connect(tb.Context(), url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	var v T
	if err := conn.QueryRow(tb.Context(), sql).Scan(&v); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
	return v
}

func mustExec(tb testing.TB, url, sql string) {
	tb.Helper()
	conn, err := pgx.Connect(tb.Context(), url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(tb.Context(), sql); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}
