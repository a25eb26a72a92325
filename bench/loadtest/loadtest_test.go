package loadtest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"exactlyonce/bench/loadtest"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestPrintTable(t *testing.T) {
	t.Parallel()
	base := loadtest.Result{Name: "pgbench: x", N: 1000, Elapsed: time.Second, P50: 2 * time.Millisecond, P99: 9 * time.Millisecond}
	app := loadtest.Result{Name: "app: y", N: 500, Elapsed: time.Second, P50: 1500 * time.Microsecond, P99: 3 * time.Second,
		CPU: 50 * time.Millisecond, Errors: 2}
	out := loadtest.TableString([]loadtest.Row{{Result: base}, {Result: app, Baseline: &base, Target: "≥ 0.6×"}, {Result: app, Alone: true}})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("got %d lines, want a header, a rule and 3 rows:\n%s", len(lines), out)
	}
	for _, want := range []string{"| pgbench: x", "1 (baseline)", "0.50× pgbench: x", "≥ 0.6×", "1.50 ms", "3.00 s", "100 µs", "| 2 "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(lines[4], "| —") {
		t.Errorf("a row without baseline shows a ratio: %s", lines[4])
	}
}

func TestPercentiles(t *testing.T) {
	t.Parallel()
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	p50, p99 := loadtest.Percentiles(d)
	if p50 != 50*time.Millisecond || p99 != 99*time.Millisecond {
		t.Errorf("got p50 %s p99 %s, want 50ms 99ms", p50, p99)
	}
	if p50, p99 := loadtest.Percentiles(nil); p50 != 0 || p99 != 0 {
		t.Error("percentiles of nothing are not zero")
	}
}

func TestProcessCPU(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	before, err := loadtest.ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for x, end := 0, time.Now().Add(50*time.Millisecond); time.Now().Before(end); x++ {
	}
	after, err := loadtest.ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if before < 0 || after < before {
		t.Errorf("CPU time went from %s to %s", before, after)
	}
}

func TestNewShopLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"http://example.com", "http://10.0.0.1:8080", "https://127.0.0.1"} {
		if _, err := loadtest.NewShop(base, 1); err == nil {
			t.Errorf("NewShop(%q) accepted a base that is not loopback http", base)
		}
	}
}

// TestTinyRun runs each HTTP leg for a few requests against the real shop
// and each pgbench script a few times against its database: every request
// succeeds, and the database holds exactly the orders and charges made.
func TestTinyRun(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	ctx := context.Background()
	shop, err := loadtest.NewShop(h.URL, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := shop.Setup(ctx, 2); err != nil {
		t.Fatal(err)
	}
	opts := loadtest.Options{Clients: 2, Duration: time.Minute, Max: 6}
	for _, leg := range []struct {
		name string
		do   func(context.Context, int) error
	}{{"new orders", shop.NewOrder}, {"replays", shop.Replay}, {"checkout page", shop.CheckoutPage},
		{"browser orders", shop.BrowserOrder}} {
		r := loadtest.Run(ctx, leg.name, opts, leg.do)
		if r.N != 6 || r.Errors != 0 {
			t.Errorf("%s: %d ok and %d errors (first: %v), want 6 and 0", leg.name, r.N, r.Errors, r.FirstErr)
		}
		if r.P50 <= 0 || r.P99 < r.P50 {
			t.Errorf("%s: p50 %s, p99 %s", leg.name, r.P50, r.P99)
		}
	}
	// Setup placed one order per worker, the new-order leg six and the
	// browser-order leg six; replays and pages charge nothing.
	h.WantStats(t, 14, 14)

	if _, err := exec.LookPath("pgbench"); err != nil {
		t.Skip("pgbench is not installed")
	}
	pgb := loadtest.Pgbench{Env: libpqEnv(t, h.DB.Pool.Config().ConnString()), Mode: "prepared", Dir: t.TempDir()}
	if _, err := h.DB.Pool.Exec(ctx, loadtest.MinimalSchema); err != nil {
		t.Fatal(err)
	}
	cust, token, key := shop.Customer(0)
	sum := sha256.Sum256([]byte(token))
	defs := map[string]string{"cust": cust, "tokenhash": hex.EncodeToString(sum[:]), "fakedb": "1"}
	// neworder.sql once more as with the fake Stripe in memory: its two
	// transactions left out.
	inMemory := map[string]string{"cust": cust, "tokenhash": hex.EncodeToString(sum[:]), "fakedb": "0"}
	for _, s := range []struct {
		script string
		defs   map[string]string
	}{{"neworder.sql", defs}, {"neworder.sql", inMemory}, {"seed.sql", defs}, {"claim.sql", defs}, {"pointselect.sql", map[string]string{"cust": cust, "key": key}},
		{"minimal.sql", defs}} {
		r, err := pgb.Run(ctx, s.script, s.script, loadtest.Options{Clients: 2, Duration: time.Second, Max: 4}, s.defs)
		if err != nil {
			t.Fatal(err)
		}
		if r.N != 4 || r.Errors != 0 || r.Rate() <= 0 {
			t.Errorf("%s: %d transactions, %d failed, rate %.0f", s.script, r.N, r.Errors, r.Rate())
		}
	}
	// neworder.sql (twice) and seed.sql each wrote an order per transaction.
	var orders int
	if err := h.DB.Pool.QueryRow(ctx, "SELECT count(*) FROM orders WHERE idempotency_key LIKE 'pgb-%' OR idempotency_key LIKE 'seed-%'").Scan(&orders); err != nil {
		t.Fatal(err)
	}
	if orders != 12 {
		t.Errorf("pgbench scripts wrote %d orders, want 12", orders)
	}
	// Each of their keys is finished in the kit's table, neworder.sql's by
	// idem_finish under the claim's own lock token, with the shop's
	// order_keys row beside it.
	var finished, sides int
	if err := h.DB.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE k.status = 'finished' AND k.response_status = 201),
			count(*) FILTER (WHERE EXISTS (SELECT FROM order_keys o WHERE o.scope = k.scope AND o.key = k.key))
		FROM idem_keys k WHERE k.scope = $1 AND (k.key LIKE 'pgb-%' OR k.key LIKE 'seed-%')`, cust).Scan(&finished, &sides); err != nil {
		t.Fatal(err)
	}
	if finished != 12 || sides != 12 {
		t.Errorf("pgbench scripts left %d finished keys, %d with an order_keys row, want 12 and 12", finished, sides)
	}
	// The fake Stripe's side: a succeeded PaymentIntent per order, each
	// with the answers of its create and its confirm stored for their
	// keys (none for the run with the fake in memory); neworder.sql's
	// intents stored in their keys' rows, under the claim's lock token,
	// in both its runs.
	var intents, answers, stored int
	if err := h.DB.Pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM fakestripe.payment_intents WHERE status = 'succeeded' AND (id LIKE 'pi_pgb%' OR id LIKE 'pi_seed%')),
			(SELECT count(*) FROM fakestripe.idempotency_keys WHERE key LIKE 'prov-%' OR key LIKE 'sprov-%'),
			(SELECT count(*) FROM order_keys WHERE scope = $1 AND payment_intent_id LIKE 'pi_pgb%')`, cust).Scan(&intents, &answers, &stored); err != nil {
		t.Fatal(err)
	}
	if intents != 8 || answers != 16 || stored != 8 {
		t.Errorf("pgbench scripts left %d succeeded intents, %d stored answers, %d intents in key rows, want 8, 16 and 8", intents, answers, stored)
	}
	// minimal.sql: per transaction a finished key, a charge and an order,
	// the order written by the fenced finish.
	var minKeys, minCharges, minOrders int
	if err := h.DB.Pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM minimal_keys WHERE status = 'finished' AND response_status = 201),
			(SELECT count(*) FROM minimal_charges), (SELECT count(*) FROM minimal_orders)`).Scan(&minKeys, &minCharges, &minOrders); err != nil {
		t.Fatal(err)
	}
	if minKeys != 4 || minCharges != 4 || minOrders != 4 {
		t.Errorf("minimal.sql left %d finished keys, %d charges, %d orders, want 4 of each", minKeys, minCharges, minOrders)
	}
}

// libpqEnv turns a pgx connection string (a URL) into pgbench's variables.
func libpqEnv(t *testing.T, conn string) []string {
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	host, port := u.Hostname(), u.Port()
	if h := u.Query().Get("host"); h != "" {
		host = h
	}
	if p := u.Query().Get("port"); p != "" {
		port = p
	}
	if port == "" {
		port = "5432"
	}
	return []string{"PGHOST=" + host, "PGPORT=" + port, "PGUSER=" + u.User.Username(), "PGDATABASE=" + strings.TrimPrefix(u.Path, "/")}
}
