package main

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// customersDB connects to a new database of the test's own, with the
// growth customers seeded as the legs seed them.
func customersDB(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.WithoutCancel(ctx)) })
	if err := seedCustomers(ctx, conn); err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestSeedKeys bulk-seeds keys as growth and sweepLoad do: each is a
// finished row of the kit's idem_keys, scoped by a growth customer's id,
// with the shop's order_keys row beside it, and old enough for the sweeper
// when asked.
func TestSeedKeys(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	conn := customersDB(t)
	if err := seedKeys(ctx, conn, "bulk-", 1, 1500, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := seedKeys(ctx, conn, "expired-", 1, 10, 25*time.Hour); err != nil {
		t.Fatal(err)
	}
	var keys, finished, scoped, sides, expired int
	if err := conn.QueryRow(ctx, `SELECT count(*),
			count(*) FILTER (WHERE k.status = 'finished' AND k.response_status = 201 AND k.finished_at IS NOT NULL),
			count(*) FILTER (WHERE EXISTS (SELECT FROM customers c WHERE c.id::text = k.scope)),
			count(*) FILTER (WHERE EXISTS (SELECT FROM order_keys o WHERE o.scope = k.scope AND o.key = k.key)),
			count(*) FILTER (WHERE k.finished_at < now() - interval '24 hours')
		FROM idem_keys k`).Scan(&keys, &finished, &scoped, &sides, &expired); err != nil {
		t.Fatal(err)
	}
	if keys != 1510 || finished != keys || scoped != keys || sides != keys || expired != 10 {
		t.Errorf("%d keys: %d finished, %d scoped by a customer, %d with an order_keys row, %d expired; want 1510 of each but 10 expired",
			keys, finished, scoped, sides, expired)
	}
}
