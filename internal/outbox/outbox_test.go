package outbox_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/pgtest"
)

const oneMug = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`

// River's schema comes with the shop's migrations (00060_river.sql); River's
// own migrator must find nothing left to apply. A River upgrade that brings
// a migration fails here until a new goose migration carries it.
func TestRiverSchemaIsCurrent(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t)
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := migrator.Migrate(context.Background(), rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Versions) != 0 {
		t.Errorf("got %d River migrations pending (first %d), want 0", len(res.Versions), res.Versions[0].Version)
	}
}

// FinishOrder inserts River's job rows by hand, in its own statement. If
// those rows drift from what River expects (a column, a state, the args'
// shape, a kind without a worker), the workers do not take them, or fail on
// them, and this test times out: the proof is that River runs them.
func TestEnqueuedJobsRun(t *testing.T) {
	t.Parallel()
	withCatcher, catcher := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher)
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("place order: got %d %s, want 201", r.Status, r.Body)
	}
	if got := h.Count(t, `SELECT count(*) FROM river_job WHERE state = 'available'`); got != 2 {
		t.Errorf("got %d available jobs after the order, want 2 (loyalty, mail)", got)
	}
	h.StartJobs(t)
	h.WaitCount(t, 2, `SELECT count(*) FROM river_job WHERE state = 'completed' AND attempt = 1`)
	if got := h.Count(t, `SELECT count(*) FROM loyalty_ledger l JOIN orders o ON o.id = l.order_id AND l.points = o.amount / 100`); got != 1 {
		t.Errorf("got %d ledger rows with the order's points, want 1", got)
	}
	if got := h.Count(t, `SELECT count(*) FROM sent_mails`); got != 1 {
		t.Errorf("got %d sent mails recorded, want 1", got)
	}
	msgs := catcher.Messages()
	if len(msgs) != 1 {
		t.Fatalf("got %d messages at the SMTP server, want 1", len(msgs))
	}
	var messageID string
	if err := h.DB.Pool.QueryRow(context.Background(), `SELECT message_id FROM sent_mails`).Scan(&messageID); err != nil {
		t.Fatal(err)
	}
	if msgs[0].MessageID != "<"+messageID+">" || !strings.HasPrefix(messageID, "order-placed.") {
		t.Errorf("got Message-ID %q, recorded %q; want the recorded one, derived from the order", msgs[0].MessageID, messageID)
	}
}
