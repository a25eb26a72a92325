package hapg

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// startFormation starts a throwaway formation in a folder of its own under
// /tmp (t.TempDir is out of user postgres's reach), stopped at cleanup.
func startFormation(tb testing.TB, opts Options) *Formation {
	tb.Helper()
	dir, err := os.MkdirTemp("/tmp", "hapg-test-")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	opts.Dir, opts.Throwaway, opts.Log = dir, true, testLog{tb}
	ctx, cancel := context.WithTimeout(tb.Context(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	f, err := Start(ctx, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("formation created in %s", time.Since(began).Round(time.Millisecond))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := f.Stop(ctx); err != nil {
			tb.Error(err)
		}
	})
	return f
}

// testLog writes the formation's steps to the test's log.
type testLog struct{ tb testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.tb.Log(time.Now().Format("15:04:05.000"), strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func mustPool(tb testing.TB, url string) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(tb.Context(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}
