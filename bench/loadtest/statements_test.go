package loadtest

import (
	"bytes"
	"strings"
	"testing"
)

func TestStatementName(t *testing.T) {
	for query, want := range map[string]string{
		"-- name: ClaimOrderKey :one\nSELECT * FROM idem_claim($1)":         "ClaimOrderKey",
		"  -- name: JobGetAvailable :many\nWITH locked_jobs AS (...)":       "JobGetAvailable",
		"begin isolation level read committed":                              "BEGIN",
		"COMMIT":                                                            "COMMIT",
		"NOT coalesce((SELECT require_sync FROM durability_policy), false)": inServer,
		"SELECT   1\n  FROM t":                                              "SELECT 1 FROM t",
		"SELECT " + strings.Repeat("x", 80):                                 "SELECT " + strings.Repeat("x", 53) + "…",
	} {
		if got := StatementName(query); got != want {
			t.Errorf("StatementName(%q) = %q, want %q", query, got, want)
		}
	}
}

func TestPrintStatements(t *testing.T) {
	var b bytes.Buffer
	stmts := []Statement{{"ClaimOrderKey", 100}, {"COMMIT", 300}, {inServer, 300}, {"JobSchedule", 1}}
	if err := PrintStatements(&b, "new orders", stmts, 100); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"4.0 statements (round trips) per order, of which 3.0 COMMIT (100 orders)", "| ClaimOrderKey | 1.00 |", "| COMMIT | 3.00 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("got\n%s\nwant a line with %q", out, want)
		}
	}
	if strings.Contains(out, "JobSchedule") {
		t.Errorf("got\n%s\nwant rarer statements left out", out)
	}
}
