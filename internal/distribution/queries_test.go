package distribution

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// hotTables grow with the traffic and would be distributed by customer_id,
// or by the kit's scope, which for an order key is the customer's id.
// (cart_lines has no customer_id column yet; see docs/scaling.md.)
var hotTables = []string{"idem_keys", "order_keys", "orders", "carts", "key_events", "loyalty_ledger", "sent_mails"}

// crossCustomer are the queries allowed to touch a hot table without naming
// one customer, each with why. On Citus they run as multi-shard queries
// (fanned out to every worker), which is acceptable for background work and
// tests, never for a request.
var crossCustomer = map[string]string{
	// Background workers scan for work across customers (a fan-out per pass).
	"TakeStuck":      "kit's completer: finds any stuck key (SKIP LOCKED), then works on its scope's rows",
	"Asked":          "kit's record of its clients' asks: a batch of the keys, of any customers, one instance was asked about (each by scope and key)",
	"Sweep":          "kit's sweeper: deletes expired finished keys of every scope, in batches",
	"SweepKeyEvents": "sweeper: deletes old audit events of every customer, in batches",
	// Stripe's webhook and the reconciler: an intent's metadata (and so an
	// event's customer) is written by whoever creates the intent or forges
	// the event, so the key and order are found by the intent's id alone
	// (unique on order_keys, indexed on orders): one fan-out per event.
	"MatchIntent": "webhook and reconciler: find the key and order by the PaymentIntent's id alone, never by the customer its metadata names",
	"AwaitingKeyOfIntent": "webhook: finds the key waiting for its shopper's 3-D Secure by the PaymentIntent's id alone (unique on order_keys), " +
		"never by the customer its metadata names",
	// The tests' and the demo page's counters and the chaos harness's
	// invariant checks: whole-shop scans, never on a shop's request path.
	"Totals":                   "the tests' totals: counts across the whole shop",
	"DemoStats":                "the demo's counters (demo/lab): counts across the whole shop",
	"ChaosOrderCount":          "chaos harness: counts every order, to see that orders flow before a failover",
	"ChaosKeysWithManyOrders":  "chaos harness check: scans every order",
	"ChaosChargesInManyOrders": "chaos harness check: scans every order",
	"ChaosOrderCharges":        "chaos harness check: lists every order with its charge, to hold against the provider's ledger",
	"ChaosStartedKeys":         "chaos harness check: counts every started key",
	"ChaosKeys":                "chaos harness check: lists every key",
	"ChaosStoredAnswers":       "chaos history checker: lists every key's stored answer, the last read of each key",
	"ChaosOrders":              "chaos harness check: lists every order",
	"ChaosTotals":              "chaos harness check: totals across the shop",
	"ChaosOrdersWithoutPoints": "chaos harness check: scans every order for its ledger row",
	"ChaosOrdersWithoutMail":   "chaos harness check: scans every order for its sent-mail record",
	"ChaosLockNewestKeys":      "chaos harness disruption: row-locks the newest keys of any customer, as a stalled session would",
	"ChaosOrderRefunds":        "chaos harness check: every order with its refunds, award and reversals (issue 40)",
	"ChaosStockOfOrders":       "chaos harness check: every stock reservation against its key's order",
	"ChaosRefundStoredAnswers": "chaos history checker: every refund key's stored answer, the last read of each",
	// The operator's Find an order (the admin listener, never the shop's
	// listener): a customer quotes a number, an intent or a name, not
	// their id. Rare, and each bounded by an index or a LIMIT.
	"OrdersByNumber":  "operator's search: an order by the number a customer quotes (orders_number), before its customer is known",
	"OrdersByIntent":  "operator's search: the order a PaymentIntent paid (orders_charge_id), before its customer is known",
	"CustomersNamed":  "operator's search: customers by part of a name, with their order counts (LIMIT)",
	"KeyOfIntent":     "operator's search: the key that made a PaymentIntent no order holds (unique on order_keys)",
	"AttentionCounts": "operator's page: counts what waits across the shop",
	"AttentionKeys":   "operator's page: lists the waiting keys of any customer, oldest first (LIMIT)",
	// The lab's own browser (demo/lab) learns its shopper from the cart
	// its cookie holds.
	"CartCustomer": "the lab's browser: the customer of a cart it made, by the cart's id",
}

// A query names one customer with an equality on customer_id (or the kit's
// scope) with a parameter, by INSERT ... (customer_id, ...) VALUES, or by
// calling the kit's idem_claim or idem_finish, whose first argument is the
// scope: an INSERT ... SELECT counts only if what it selects from is
// filtered so.
var (
	customerEq     = regexp.MustCompile(`(?i)\b(customer_id|scope)\s*=\s*\(?@\w+|\bidem_(claim|finish)\(\s*\(?@\w+`)
	insertCustomer = regexp.MustCompile(`(?is)\binsert\s+into\s+\w+\s*\([^)]*\bcustomer_id\b[^)]*\)\s*values\s*\(`)
	queryName      = regexp.MustCompile(`(?m)^--\s*name:\s*(\w+)`)
	lineComment    = regexp.MustCompile(`--[^\n]*`)
	kitFunction    = regexp.MustCompile(`(?i)\bidem_(claim|finish)\(`)
	stringLit      = regexp.MustCompile(`'(?:[^']|'')*'`)
)

type query struct{ file, name, sql string }

func loadQueries(t *testing.T) []query {
	t.Helper()
	// queries/ and any other sqlc query file in the module (a file with
	// "-- name:" lines), so that SQL added elsewhere is checked too; not
	// the migrations, nor the load test's pgbench scripts.
	var files []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "migrations", "testdata", "node_modules", "pgbench", ".data", "artifacts":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".sql") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if queryName.Match(b) {
				files = append(files, path)
			}
		}
		return nil
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("no queries found: %v", err)
	}
	var qs []query
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		idx := queryName.FindAllStringSubmatchIndex(text, -1)
		for i, m := range idx {
			end := len(text)
			if i+1 < len(idx) {
				end = idx[i+1][0]
			}
			body := text[m[1]:end]
			body = lineComment.ReplaceAllString(body, " ")
			body = stringLit.ReplaceAllString(body, "''")
			qs = append(qs, query{file: strings.TrimPrefix(f, "../../"), name: text[m[2]:m[3]], sql: body})
		}
	}
	return qs
}

// touches returns the hot tables a query reads or writes. The shop reads
// the kit's table through the views of the kit's SQL contract
// (idem_keys_v1), which count as the table.
func touches(sql string) []string {
	var out []string
	for _, tbl := range hotTables {
		name := tbl
		if tbl == "idem_keys" {
			name = `idem_keys(_v\d+)?`
		}
		re := regexp.MustCompile(`(?i)\b(from|join|update|into)\s+` + name + `\b`)
		if re.MatchString(sql) || tbl == "idem_keys" && kitFunction.MatchString(sql) {
			out = append(out, tbl)
		}
	}
	return out
}

func TestHotQueriesNameACustomer(t *testing.T) {
	t.Parallel()
	qs := loadQueries(t)
	seen := map[string]bool{}
	checked := 0
	for _, q := range qs {
		seen[q.name] = true
		tables := touches(q.sql)
		if len(tables) == 0 {
			continue
		}
		checked++
		ok := customerEq.MatchString(q.sql) || insertCustomer.MatchString(q.sql)
		_, allowed := crossCustomer[q.name]
		switch {
		case !ok && !allowed:
			t.Errorf("%s: %s touches %s without filtering by customer_id: add `customer_id = @customer_id`, "+
				"or list it in crossCustomer with why it must scan across customers", q.file, q.name, strings.Join(tables, ", "))
		case ok && allowed:
			t.Errorf("%s: %s filters by customer_id but is in the allow-list: remove it from crossCustomer", q.file, q.name)
		}
	}
	if checked < 20 {
		t.Errorf("only %d queries touch a hot table: is the parser still finding them?", checked)
	}
	var stale []string
	for name := range crossCustomer {
		if !seen[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	for _, name := range stale {
		t.Errorf("crossCustomer lists %s, which no file in queries/ defines any more", name)
	}
}

// TestParser checks the checker on queries it must accept and refuse.
func TestParser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sql  string
		hot  bool
		good bool
	}{
		{"SELECT * FROM orders WHERE customer_id = @customer_id AND id = @id", true, true},
		{"SELECT * FROM orders WHERE id = @id", true, false},
		{"INSERT INTO key_events (customer_id, key) VALUES (@c, @k)", true, true},
		{"UPDATE carts SET x = 1 WHERE id = @id", true, false},
		{"SELECT * FROM products WHERE sku = @sku", false, true},
		{"SELECT 'FROM orders' FROM customers", false, true},
	} {
		body := stringLit.ReplaceAllString(lineComment.ReplaceAllString(tc.sql, " "), "''")
		if hot := len(touches(body)) > 0; hot != tc.hot {
			t.Errorf("%q: hot %v, want %v", tc.sql, hot, tc.hot)
		}
		if tc.hot {
			if good := customerEq.MatchString(body) || insertCustomer.MatchString(body); good != tc.good {
				t.Errorf("%q: filtered %v, want %v", tc.sql, good, tc.good)
			}
		}
	}
}
