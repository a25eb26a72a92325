package loadtest

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// StatementsSettings are the server settings that let a run count the
// statements an operation costs (ReadStatements): pg_stat_statements,
// counting top-level statements only, each a round trip from a client
// (a statement a SQL function runs inside is part of its caller's).
var StatementsSettings = map[string]string{
	"shared_preload_libraries": "pg_stat_statements",
	"pg_stat_statements.track": "top",
	"pg_stat_statements.max":   "5000",
}

// Own starts the load test's own queries, so that counting leaves them
// out.
const Own = "/* loadtest */ "

// Statement is one kind of statement and how many times it ran.
type Statement struct {
	Name  string // the sqlc query's name, BEGIN, COMMIT, or the text cut short
	Calls int64
}

// ResetStatements zeroes the counts, before a leg.
func ResetStatements(ctx context.Context, conn *pgx.Conn) error {
	if _, err := conn.Exec(ctx, Own+`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		return fmt.Errorf("create pg_stat_statements: %w", err)
	}
	if _, err := conn.Exec(ctx, Own+`SELECT pg_stat_statements_reset()`); err != nil {
		return fmt.Errorf("reset pg_stat_statements: %w", err)
	}
	return nil
}

// ReadStatements reads the counts since ResetStatements, of the
// connection's database, grouped by name, the most frequent first.
func ReadStatements(ctx context.Context, conn *pgx.Conn) ([]Statement, error) {
	rows, err := conn.Query(ctx, Own+`SELECT s.query, s.calls FROM pg_stat_statements s
		JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database()`)
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_statements: %w", err)
	}
	defer rows.Close()
	calls := map[string]int64{}
	for rows.Next() {
		var query string
		var n int64
		if err := rows.Scan(&query, &n); err != nil {
			return nil, err
		}
		if strings.Contains(query, Own) {
			continue
		}
		calls[StatementName(query)] += n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Statement, 0, len(calls))
	for name, n := range calls {
		out = append(out, Statement{Name: name, Calls: n})
	}
	slices.SortFunc(out, func(a, b Statement) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// sqlcName is the comment sqlc puts at the head of every query it
// generates, the shop's and River's alike.
var sqlcName = regexp.MustCompile(`^\s*-- name: (\w+)`)

// inServer names the statements PostgreSQL runs itself, which no client
// sends: the durability policy's deferred constraint trigger
// (exactlyonce_require_sync, migration 00140) evaluates its check when a
// transaction that wrote a key commits, and pg_stat_statements lists that
// expression as a statement of its own.
const inServer = "(in the server) the durability trigger's check at COMMIT"

// StatementName names a statement as a reader of the code knows it: the
// sqlc query's name, BEGIN/COMMIT/ROLLBACK by its first word, the
// durability trigger's check, anything else by its first 60 characters,
// spaces collapsed.
func StatementName(query string) string {
	if m := sqlcName.FindStringSubmatch(query); m != nil {
		return m[1]
	}
	text := strings.Join(strings.Fields(query), " ")
	if strings.HasPrefix(text, "NOT coalesce((SELECT require_sync FROM durability_policy)") {
		return inServer
	}
	switch first, _, _ := strings.Cut(strings.ToUpper(text), " "); first {
	case "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE":
		return first
	}
	if len(text) > 60 {
		text = text[:60] + "…"
	}
	return text
}

// PerOperation is the round trips of stmts per operation, ops of them:
// the statements a client sent.
func PerOperation(stmts []Statement, ops int) float64 {
	if ops == 0 {
		return 0
	}
	var total int64
	for _, s := range stmts {
		if s.Name != inServer {
			total += s.Calls
		}
	}
	return float64(total) / float64(ops)
}

// PrintStatements writes what one operation cost the database: each kind
// of statement per operation (ops of them ran), the total of round trips,
// and of those the COMMITs, which with the autocommit statements are the
// transactions.
func PrintStatements(w io.Writer, title string, stmts []Statement, ops int) error {
	if ops == 0 {
		return nil
	}
	var commits int64
	for _, s := range stmts {
		if s.Name == "COMMIT" {
			commits += s.Calls
		}
	}
	per := func(n int64) float64 { return float64(n) / float64(ops) }
	if _, err := fmt.Fprintf(w, "\n%s: %.1f statements (round trips) per order, of which %.1f COMMIT (%d orders)\n\n| statement | per order |\n|---|---:|\n",
		title, PerOperation(stmts, ops), per(commits), ops); err != nil {
		return err
	}
	for _, s := range stmts {
		if per(s.Calls) < 0.05 {
			continue // River's maintenance and the like, rarer than once in 20 orders
		}
		if _, err := fmt.Fprintf(w, "| %s | %.2f |\n", s.Name, per(s.Calls)); err != nil {
			return err
		}
	}
	return nil
}
