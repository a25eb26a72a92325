package readiness_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"exactlyonce/internal/readiness"
)

func pass(detail string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return detail, nil }
}

func fail(detail string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return detail, errors.New("down") }
}

// A failing check that does not gate degrades the report; one that gates
// makes it unavailable with its detail as the reason, and the checks that
// come after it are skipped, not run.
func TestCheckerStatuses(t *testing.T) {
	ran := false
	c := readiness.New(time.Second, nil,
		readiness.Check{Name: "provider", Run: fail("provider unreachable")},
		readiness.Check{Name: "database", Gates: true, Run: fail("database unreachable")},
		readiness.Check{Name: "migrations", Gates: true, After: "database", Run: func(context.Context) (string, error) {
			ran = true
			return "all applied", nil
		}},
	)
	rep := c.Check(context.Background())
	if rep.Status != readiness.Unavailable || rep.Reason != "database unreachable" {
		t.Errorf("got %q %q, want unavailable, database unreachable", rep.Status, rep.Reason)
	}
	if ran || rep.Checks[2].Status != readiness.Skipped {
		t.Errorf("migrations after a failed database: got ran %v, %+v; want skipped", ran, rep.Checks[2])
	}
	w := httptest.NewRecorder()
	c.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("got %d, Cache-Control %q; want 503, no-store", w.Code, w.Header().Get("Cache-Control"))
	}

	degraded := readiness.New(time.Second, nil,
		readiness.Check{Name: "database", Gates: true, Run: pass("answers")},
		readiness.Check{Name: "provider", Run: fail("provider unreachable")})
	w = httptest.NewRecorder()
	degraded.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rep := degraded.Check(context.Background()); rep.Status != readiness.Degraded || w.Code != http.StatusOK {
		t.Errorf("a failing check that does not gate: got %q, %d; want degraded, 200", rep.Status, w.Code)
	}
}

// A check that hangs is cut off at the timeout and fails: the probe
// answers in time.
func TestCheckerBoundsAHangingCheck(t *testing.T) {
	c := readiness.New(100*time.Millisecond, nil, readiness.Check{Name: "database", Gates: true,
		Run: func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "database unreachable", ctx.Err()
		}})
	start := time.Now()
	rep := c.Check(context.Background())
	if took := time.Since(start); took > time.Second || rep.Status != readiness.Unavailable {
		t.Errorf("got %q after %s, want unavailable after about 100 ms", rep.Status, took)
	}
}
