package database_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"exactlyonce/internal/database"
	"exactlyonce/internal/pgtest"
)

// Migration 00051 moves the order keys of a running shop into the kit's
// table: a finished key keeps its answer (byte for byte the JSON it
// replayed), a started one its lease, request, operation and the cart
// version it pays for; its Down brings them back. Every later migration's
// Down runs on the way.
func TestOrderKeysMoveOntoTheKitAndBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	if err := database.MigrateAppTo(ctx, pool, 50); err != nil {
		t.Fatalf("down to 00050: %v", err)
	}
	customer, cart, op := uuid.New(), uuid.New(), uuid.New()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`INSERT INTO customers (id, name) VALUES ($1, 'before')`, customer)
	exec(`INSERT INTO carts (id, customer_id, version, order_key, order_key_at) VALUES ($1, $2, 3, 'started', now())`, cart, customer)
	exec(`INSERT INTO idempotency_keys (customer_id, key, fingerprint, status, locked_until, lock_token, response_code,
	          response_body, operation_id, provider_key)
	      VALUES ($1, 'done', '\x01', 'finished', now(), gen_random_uuid(), 201, '{"order_id": "o-1", "amount": 1200}',
	          gen_random_uuid(), 'order_done')`, customer)
	exec(`INSERT INTO idempotency_keys (customer_id, key, fingerprint, status, locked_until, lock_token, request,
	          operation_id, provider_key, cart_id, cart_version, settle_attempts)
	      VALUES ($1, 'started', '\x02', 'started', now() + interval '1 minute', gen_random_uuid(), '{"amount": 500}',
	          $2, 'order_started', $3, 3, 2)`, customer, op, cart)

	if err := database.MigrateAppTo(ctx, pool, 51); err != nil {
		t.Fatalf("up to 00051: %v", err)
	}
	var (
		kind, status string
		body         []byte
	)
	err := pool.QueryRow(ctx, `SELECT kind, status, response_body FROM idem_keys WHERE scope = $1 AND key = 'done'`,
		customer.String()).Scan(&kind, &status, &body)
	if err != nil {
		t.Fatalf("finished key after the move: %v", err)
	}
	var answer map[string]any
	if kind != "order" || status != "finished" || json.Unmarshal(body, &answer) != nil || answer["order_id"] != "o-1" {
		t.Errorf("finished key: got kind %q, status %q, body %s", kind, status, body)
	}
	var (
		gotOp        uuid.UUID
		attempts     int
		provider     string
		cartVersion  int64
		leaseRunning bool
	)
	err = pool.QueryRow(ctx, `SELECT k.operation_id, k.settle_attempts, k.locked_until > now(), o.provider_key, o.cart_version
		FROM idem_keys k JOIN order_keys o USING (scope, key) WHERE k.scope = $1 AND k.key = 'started'`,
		customer.String()).Scan(&gotOp, &attempts, &leaseRunning, &provider, &cartVersion)
	if err != nil {
		t.Fatalf("started key after the move: %v", err)
	}
	if gotOp != op || attempts != 2 || !leaseRunning || provider != "order_started" || cartVersion != 3 {
		t.Errorf("started key: got operation %s, attempts %d, lease running %v, provider key %q, cart version %d",
			gotOp, attempts, leaseRunning, provider, cartVersion)
	}

	if err := database.MigrateAppTo(ctx, pool, 50); err != nil {
		t.Fatalf("down to 00050 again: %v", err)
	}
	var keys int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE customer_id = $1`, customer).Scan(&keys); err != nil || keys != 2 {
		t.Errorf("after Down: got %d keys back, %v, want 2", keys, err)
	}
	if err := database.Migrate(ctx, pool); err != nil {
		t.Fatalf("up to the latest: %v", err)
	}
}
