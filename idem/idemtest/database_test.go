package idemtest

import (
	"errors"
	"os"
	"os/exec"
	"testing"

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

// Without TEST_DATABASE_URL, a test package fails once, before any test,
// saying what to set; it starts no server of its own.
func TestMainWithoutAServerSaysWhatToDo(t *testing.T) {
	if os.Getenv("IDEMTEST_CHILD") != "" {
		t.Fatal("a test ran without TEST_DATABASE_URL")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainWithoutAServerSaysWhatToDo$", "-test.count=1")
	cmd.Env = append(os.Environ(), "IDEMTEST_CHILD=1", envURL+"=", envAdminURL+"=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the child: got %v, want exit status 1; output:\n%s", err, out)
	}
	if got := string(out); got != errNoServer+"\n" {
		t.Fatalf("the child said %q, want only what to do:\n%s", got, errNoServer)
	}
}
