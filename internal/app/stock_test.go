package app

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/pgtest"
)

// web stock lists what keeps stock, and web stock receive adds a delivery;
// an unknown product, a count out of range or a malformed command is
// refused with what to do, and changes nothing.
func TestStockCommand(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	if err := catalog.Seed(ctx, database.New(pool).Queries); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := stock(ctx, pool, args, &out)
		return out.String(), err
	}
	if out, err := run(); err != nil || !strings.Contains(out, "No product keeps stock") {
		t.Fatalf("before any delivery: got %q, %v", out, err)
	}
	if out, err := run("receive", "mug-espresso", "12"); err != nil || !strings.Contains(out, "12 on hand") {
		t.Fatalf("receive 12: got %q, %v", out, err)
	}
	if out, err := run("receive", "mug-espresso", "3"); err != nil || !strings.Contains(out, "15 on hand, 15 received in all") {
		t.Fatalf("receive 3 more: got %q, %v", out, err)
	}
	for _, bad := range [][]string{
		{"receive", "mug-nope", "1"}, {"receive", "mug-espresso", "0"}, {"receive", "mug-espresso", "1000000"},
		{"receive", "mug-espresso", "x"}, {"receive", "mug-espresso"}, {"take", "mug-espresso", "1"},
	} {
		if _, err := run(bad...); err == nil {
			t.Errorf("web stock %s: accepted, want refused", strings.Join(bad, " "))
		}
	}
	out, err := run()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "mug-espresso") || !strings.Contains(out, "15") || strings.Contains(out, "tee-idempotent") {
		t.Errorf("the list: got\n%s\nwant the mug alone, 15 on hand", out)
	}
}
