package database_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"exactlyonce/internal/pgtest"
)

// contract is what the shop's SQL may name of the idempotency kit: its SQL
// contract, version 1 (idem/README.md, "SQL contract"). The kit's table,
// idem_keys, is not in it: its columns may change in any release of the
// kit. (The table's primary key is, for order_keys' foreign key, which
// migrations before the contract name, as they do the table.)
var contract = []string{"idem_claim", "idem_finish", "idem_keys_v1"}

// The shop's queries name the kit only through its contract.
func TestQueriesNameOnlyTheKitsSQLContract(t *testing.T) {
	files, err := filepath.Glob("../../queries/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("queries: got %v, %v", files, err)
	}
	word := regexp.MustCompile(`\bidem_\w+`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range word.FindAllString(string(b), -1) {
			if !slices.Contains(contract, name) {
				t.Errorf("%s names %s, which is not in the kit's SQL contract %v", filepath.Base(f), name, contract)
			}
		}
	}
}

// No trigger of the shop's writes on the kit's table: a takeover's audit
// event is written through the kit's TookOver hook. The only triggers left
// are the REQUIRE_SYNC_REPLICA guards (constraint triggers that write
// nothing and only refuse a commit), which the contract leaves to the
// caller.
func TestNoTriggerOfTheShopWritesOnTheKitsTable(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	rows, err := pool.Query(context.Background(), `
SELECT tgname::text FROM pg_trigger
WHERE tgrelid = 'idem_keys'::regclass AND NOT tgisinternal AND tgconstraint = 0
ORDER BY tgname`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("got triggers %v on idem_keys, want none but the constraint triggers of REQUIRE_SYNC_REPLICA", got)
	}
}
