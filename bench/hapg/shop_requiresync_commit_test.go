package hapg_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestRequireSyncJudgesTheCommitsSetting runs the shop with
// REQUIRE_SYNC_REPLICA on a pg_auto_failover formation whose synchronous
// standby is named and streaming, and writes a key row in transactions of
// its own: one whose synchronous_commit is local, and one that lowers it
// to local after its write, before its COMMIT. Neither would wait for the
// standby, and both are refused with the SQLSTATE the shop answers 503;
// the same write with synchronous_commit on commits, and so do the shop's
// own orders.
func TestRequireSyncJudgesTheCommitsSetting(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a pg_auto_failover formation")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	_, h := requireSyncShop(ctx, t, "requiresync-commit-")
	c := h.NewCustomer(t)
	const order = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`
	if r := h.PlaceOrder(t, c, "first", order); r.Status != http.StatusCreated {
		t.Fatalf("order with a synchronous standby: got %d %s, want 201", r.Status, r.Body)
	}

	// A write of both key tables: the order's key row, and its order_keys
	// row.
	write := func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE idem_keys SET settle_attempts = settle_attempts WHERE key = 'first'`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE order_keys SET cart_version = cart_version WHERE key = 'first'`)
		return err
	}
	for _, tc := range []struct {
		name string
		fn   func(tx pgx.Tx) error
	}{
		{"synchronous_commit local", func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = local"); err != nil {
				return err
			}
			return write(tx)
		}},
		{"synchronous_commit off", func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
				return err
			}
			return write(tx)
		}},
		{"synchronous_commit lowered after the write", func(tx pgx.Tx) error {
			if err := write(tx); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = local")
			return err
		}},
	} {
		err := pgx.BeginFunc(ctx, h.DB.Pool, tc.fn)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "25006" {
			t.Errorf("%s: got %v, want SQLSTATE 25006 (read_only_sql_transaction), the refusal the shop answers 503", tc.name, err)
		}
	}
	if err := pgx.BeginFunc(ctx, h.DB.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = remote_apply"); err != nil {
			return err
		}
		return write(tx)
	}); err != nil {
		t.Errorf("synchronous_commit remote_apply: %v, want the write committed", err)
	}
	if err := pgx.BeginFunc(ctx, h.DB.Pool, write); err != nil {
		t.Errorf("synchronous_commit on: %v, want the write committed", err)
	}
	if r := h.PlaceOrder(t, c, "second", order); r.Status != http.StatusCreated {
		t.Errorf("the shop's own order: got %d %s, want 201", r.Status, r.Body)
	}
}
