package idem_test

import (
	"context"
	"strings"
	"testing"

	"exactlyonce/idem/idemtest"
)

// contractV1 is the kit's SQL contract, version 1, as README.md's "SQL
// contract" lists it: the functions a caller's statement may call and the
// view it may read, with their types. It is written out here, not read from
// the migrations, so that a migration which changes any of it fails this
// test: a change of the contract is a new version (a new view beside the
// old one), named in README.md and CHANGELOG.md, never an edit of v1.
var contractV1 = []string{
	"function idem_claim(p_scope text, p_key text, p_fingerprint bytea, p_lease interval, p_request jsonb, p_operation_id uuid, p_lock_token uuid, p_kind text) boolean",
	"function idem_finish(p_scope text, p_key text, p_lock_token uuid, p_status integer, p_headers jsonb, p_body bytea) boolean",
	"view idem_keys_v1(kind text, scope text, key text, fingerprint bytea, status text, operation_id uuid, lock_token uuid, locked_until timestamp with time zone, lease_left interval, age interval, request jsonb, response_status integer, response_headers jsonb, response_body bytea, created_at timestamp with time zone, finished_at timestamp with time zone, settle_attempts integer, parked_at timestamp with time zone, asked_at timestamp with time zone)",
	"primary key idem_keys(scope, key)",
}

func TestSQLContractV1IsWhatTheMigrationsMake(t *testing.T) {
	pool := idemtest.NewPool(t)
	ctx := context.Background()
	var got []string
	rows, err := pool.Query(ctx, `
SELECT 'function ' || p.proname || '(' || pg_get_function_arguments(p.oid) || ') ' || pg_get_function_result(p.oid)
FROM pg_proc p WHERE p.proname IN ('idem_claim', 'idem_finish') AND p.pronamespace = 'public'::regnamespace
ORDER BY p.proname`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var view, pk string
	err = pool.QueryRow(ctx, `
SELECT 'view idem_keys_v1(' || string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum) || ')'
FROM pg_attribute a WHERE a.attrelid = 'idem_keys_v1'::regclass AND a.attnum > 0 AND NOT a.attisdropped`).Scan(&view)
	if err != nil {
		t.Fatal(err)
	}
	err = pool.QueryRow(ctx, `
SELECT 'primary key idem_keys(' || string_agg(a.attname, ', ' ORDER BY k.ord) || ')'
FROM pg_constraint c CROSS JOIN unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
WHERE c.conrelid = 'idem_keys'::regclass AND c.contype = 'p'`).Scan(&pk)
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, view, pk)
	if g, w := strings.Join(got, "\n"), strings.Join(contractV1, "\n"); g != w {
		t.Errorf("the SQL contract changed:\ngot\n%s\nwant\n%s", g, w)
	}
}
