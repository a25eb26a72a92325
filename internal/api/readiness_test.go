package api_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/internal/app"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/database"
	"exactlyonce/internal/pgtest"
	"exactlyonce/internal/readiness"
)

// readyz reads GET /readyz, wanting status, and returns its report with
// its checks by name.
func readyz(t *testing.T, h *apptest.Harness, status int) (readiness.Report, map[string]readiness.Result) {
	t.Helper()
	r := h.Do(t, http.MethodGet, "/readyz", "")
	if r.Status != status {
		t.Fatalf("/readyz: got %d %s, want %d", r.Status, r.Body, status)
	}
	var rep readiness.Report
	r.JSON(t, &rep)
	checks := map[string]readiness.Result{}
	for _, c := range rep.Checks {
		checks[c.Name] = c
	}
	return rep, checks
}

var allChecks = []string{"database", "migrations", "replication", "durability", "provider", "jobs"}

// durableHarness is a harness whose connections commit synchronously, as
// a production server does: the tests' server runs with synchronous_commit
// off for speed, which the durability check rightly reports as a risk.
func durableHarness(t *testing.T, opts ...apptest.Option) *apptest.Harness {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), pgtest.NewDatabaseSetting(t, "synchronous_commit", "on"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return apptest.NewOnPool(t, pool, opts...)
}

// A healthy server reports every check ok, each with the time it took.
func TestReadinessReportsEveryCheck(t *testing.T) {
	t.Parallel()
	h := durableHarness(t)
	rep, checks := readyz(t, h, http.StatusOK)
	if rep.Status != readiness.Ready || len(rep.Checks) != len(allChecks) {
		t.Errorf("got status %q with %d checks, want ready with %d", rep.Status, len(rep.Checks), len(allChecks))
	}
	for _, name := range allChecks {
		c, ok := checks[name]
		if !ok || c.Status != readiness.OK || c.LatencyMS <= 0 || c.Detail == "" {
			t.Errorf("%s: got %+v, want ok with a latency and a detail", name, c)
		}
	}
	if !checks["database"].Gates || checks["provider"].Gates || checks["jobs"].Gates || checks["durability"].Gates {
		t.Errorf("got gates database %v, provider %v, jobs %v, durability %v; want only the database's checks to gate",
			checks["database"].Gates, checks["provider"].Gates, checks["jobs"].Gates, checks["durability"].Gates)
	}
}

// The durability check says whether a failover or a crash could lose a key
// the shop acknowledged, and /metrics says it too; it never takes the
// instance out of rotation (that would not make a standby synchronous).
// REQUIRE_SYNC_REPLICA fails it on a server with no synchronous standby,
// and refuses the start.
func TestReadinessReportsDurability(t *testing.T) {
	t.Parallel()
	t.Run("single server, synchronous commit", func(t *testing.T) {
		t.Parallel()
		h := durableHarness(t)
		_, checks := readyz(t, h, http.StatusOK)
		if c := checks["durability"]; c.Status != readiness.OK || !strings.Contains(c.Detail, "single server") {
			t.Errorf("got %+v, want ok, single server", c)
		}
		if n := h.Metric(t, "exactlyonce_db_can_lose_acknowledged_keys"); n != 0 {
			t.Errorf("exactlyonce_db_can_lose_acknowledged_keys = %v, want 0", n)
		}
		if err := app.CheckDurability(t.Context(), h.DB, false, slog.New(slog.DiscardHandler)); err != nil {
			t.Errorf("start-up check: got %v, want nil", err)
		}
	})
	t.Run("synchronous commit off", func(t *testing.T) {
		t.Parallel()
		h := apptest.New(t) // the tests' server: synchronous_commit off
		rep, checks := readyz(t, h, http.StatusOK)
		if c := checks["durability"]; rep.Status != readiness.Degraded || c.Status != readiness.Fail ||
			!strings.Contains(c.Detail, "synchronous_commit is off") {
			t.Errorf("got %q, %+v; want degraded, durability failing on synchronous_commit off", rep.Status, c)
		}
		if n := h.Metric(t, "exactlyonce_db_can_lose_acknowledged_keys"); n != 1 {
			t.Errorf("exactlyonce_db_can_lose_acknowledged_keys = %v, want 1", n)
		}
	})
	t.Run("REQUIRE_SYNC_REPLICA on a single server", func(t *testing.T) {
		t.Parallel()
		pool, err := database.OpenWith(t.Context(), pgtest.NewDatabaseSetting(t, "synchronous_commit", "on"),
			database.PoolOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		h := apptest.NewOnPool(t, pool)
		c := h.NewCustomer(t)
		const order = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`
		// The policy is off until a shop asks for it: a single server
		// takes orders.
		if r := h.PlaceOrder(t, c, "before-the-policy", order); r.Status != http.StatusCreated {
			t.Fatalf("order before REQUIRE_SYNC_REPLICA: got %d %s, want 201", r.Status, r.Body)
		}
		if _, checks := readyz(t, h, http.StatusOK); checks["durability"].Status != readiness.OK {
			t.Errorf("durability before REQUIRE_SYNC_REPLICA: got %+v, want ok", checks["durability"])
		}
		discard := slog.New(slog.DiscardHandler)
		if err := app.CheckDurability(t.Context(), h.DB, true, discard); err != nil {
			t.Errorf("start-up check: got %v, want nil (the shop starts; its writes are refused)", err)
		}
		// A shop started later without the flag leaves the policy on.
		if err := app.CheckDurability(t.Context(), h.DB, false, discard); err != nil {
			t.Errorf("start-up check without the flag: got %v, want nil", err)
		}
		_, checks := readyz(t, h, http.StatusOK)
		if c := checks["durability"]; c.Status != readiness.Fail || !strings.Contains(c.Detail, "single server") {
			t.Errorf("got %+v, want a failing check that says single server", c)
		}
		if n := h.Metric(t, "exactlyonce_db_synchronous_standby"); n != 0 {
			t.Errorf("exactlyonce_db_synchronous_standby = %v, want 0", n)
		}
		// No synchronous standby: the database refuses to write the key,
		// and the shop answers as for an outage, storing nothing; the
		// order placed before is still replayed.
		r := h.PlaceOrder(t, c, "needs-a-standby", order)
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			t.Errorf("order without a synchronous standby: got %d (Retry-After %q) %s, want 503 with Retry-After",
				r.Status, r.Header.Get("Retry-After"), r.Body)
		}
		if r := h.PlaceOrder(t, c, "before-the-policy", order); r.Status != http.StatusCreated {
			t.Errorf("replay under the policy: got %d %s, want the stored 201", r.Status, r.Body)
		}
		h.WantStats(t, 1, 1)
		var keys int
		if err := h.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM idem_keys`).Scan(&keys); err != nil || keys != 1 {
			t.Errorf("got %d keys (%v), want only the one written before the policy", keys, err)
		}
	})
}

// The database gone: its check fails, those that need it are skipped, and
// the instance is not ready.
func TestReadinessWithoutDatabase(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	h.DB.Pool.Close()
	rep, checks := readyz(t, h, http.StatusServiceUnavailable)
	if rep.Status != readiness.Unavailable || rep.Reason != "database unreachable" {
		t.Errorf("got status %q reason %q, want unavailable, database unreachable", rep.Status, rep.Reason)
	}
	want := map[string]string{"database": readiness.Fail, "migrations": readiness.Skipped,
		"replication": readiness.Skipped, "jobs": readiness.Skipped}
	for name, status := range want {
		if checks[name].Status != status {
			t.Errorf("%s: got %+v, want %s", name, checks[name], status)
		}
	}
}

// A provider nobody answers at fails its own check, and only that one;
// the instance stays in rotation (degraded), since every instance shares
// the provider: the shop's pages and replays still work.
func TestReadinessWithProviderDown(t *testing.T) {
	t.Parallel()
	h := durableHarness(t, func(c *apptest.Setup) {
		c.StripeAPIBase, c.StripeSecretKey = "http://127.0.0.1:1", "sk_test_nobody"
	})
	rep, checks := readyz(t, h, http.StatusOK)
	if rep.Status != readiness.Degraded {
		t.Errorf("got status %q, want degraded", rep.Status)
	}
	for _, name := range allChecks {
		want := readiness.OK
		if name == "provider" {
			want = readiness.Fail
		}
		if checks[name].Status != want {
			t.Errorf("%s: got %+v, want %s", name, checks[name], want)
		}
	}
	if d := checks["provider"].Detail; d != "provider unreachable" {
		t.Errorf("provider detail: got %q, want provider unreachable", d)
	}
}

// Jobs that wait over a minute, as when no worker runs anywhere, fail the
// jobs check without taking the instance out of rotation.
func TestReadinessWithJobsWaiting(t *testing.T) {
	t.Parallel()
	h := apptest.New(t) // no job workers
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "k", `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`); r.Status != http.StatusCreated {
		t.Fatalf("place order: got %d %s", r.Status, r.Body)
	}
	if _, checks := readyz(t, h, http.StatusOK); checks["jobs"].Status != readiness.OK {
		t.Errorf("jobs just enqueued: got %+v, want ok", checks["jobs"])
	}
	if _, err := h.DB.Pool.Exec(t.Context(), `UPDATE river_job SET scheduled_at = now() - interval '2 minutes'`); err != nil {
		t.Fatal(err)
	}
	rep, checks := readyz(t, h, http.StatusOK)
	if rep.Status != readiness.Degraded || checks["jobs"].Status != readiness.Fail {
		t.Errorf("jobs waiting 2 minutes: got %q, %+v; want degraded, jobs fail", rep.Status, checks["jobs"])
	}
}
