package loyalty_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/loyalty"
	"exactlyonce/internal/outbox"
)

const oneMug = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`

func placeOrder(t *testing.T, h *apptest.Harness, c apptest.Customer, key string) uuid.UUID {
	t.Helper()
	r := h.PlaceOrder(t, c, key, oneMug)
	if r.Status != http.StatusCreated {
		t.Fatalf("place order: got %d %s, want 201", r.Status, r.Body)
	}
	var receipt checkout.Receipt
	r.JSON(t, &receipt)
	return receipt.OrderID
}

func withLoyaltyHooks(hooks loyalty.Hooks) apptest.Option {
	return func(c *apptest.Setup) { c.Jobs.LoyaltyHooks = hooks }
}

// The worker dies after its ledger insert and before the job is marked
// completed (the hook's error stands for the crash: the transaction rolls
// back as a killed connection's would). River delivers the job again, and
// the ledger holds the order's points once.
func TestRedeliveryAfterCrash(t *testing.T) {
	t.Parallel()
	withCatcher, _ := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher, withLoyaltyHooks(loyalty.Hooks{
		AfterAward: func(_ context.Context, job *river.Job[outbox.LoyaltyArgs]) error {
			if job.Attempt == 1 {
				return errors.New("simulated crash after the ledger insert")
			}
			return nil
		},
	}))
	c := h.NewCustomer(t)
	order := placeOrder(t, h, c, "k")
	h.StartJobs(t)
	h.WaitCount(t, 1, `SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'completed'`, outbox.LoyaltyKind)
	if got := h.Count(t, `SELECT attempt FROM river_job WHERE kind = $1`, outbox.LoyaltyKind); got != 2 {
		t.Errorf("got the loyalty job completed at attempt %d, want 2 (one crash, one redelivery)", got)
	}
	if got := h.Count(t, `SELECT count(*) FROM loyalty_ledger WHERE order_id = $1`, order); got != 1 {
		t.Errorf("got %d ledger rows for the order, want 1", got)
	}
}

// Several jobs for one order (a duplicate event, or a completion lost
// after the commit) run at once: one ledger row, every job completed.
func TestConcurrentDuplicateJobs(t *testing.T) {
	t.Parallel()
	withCatcher, _ := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher)
	c := h.NewCustomer(t)
	order := placeOrder(t, h, c, "k")
	args := outbox.LoyaltyArgs{OrderPlaced: outbox.OrderPlaced{CustomerID: c.ID, OrderID: order}}
	var params []river.InsertManyParams
	for range 5 {
		params = append(params, river.InsertManyParams{Args: args})
	}
	if _, err := h.App.Jobs.InsertMany(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	h.StartJobs(t)
	h.WaitCount(t, 6, `SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'completed'`, outbox.LoyaltyKind)
	if got := h.Count(t, `SELECT count(*) FROM loyalty_ledger WHERE order_id = $1`, order); got != 1 {
		t.Errorf("got %d ledger rows for the order, want 1", got)
	}
}

// The balance is the sum of the orders' points, whatever the order of the
// jobs, and the API shows it.
func TestBalanceIsSumOfOrderPoints(t *testing.T) {
	t.Parallel()
	withCatcher, _ := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher)
	c := h.NewCustomer(t)
	for _, key := range []string{"a", "b", "c"} {
		placeOrder(t, h, c, key)
	}
	h.StartJobs(t)
	h.WaitCount(t, 3, `SELECT count(*) FROM loyalty_ledger WHERE customer_id = $1`, c.ID)
	want := h.Count(t, `SELECT sum(amount / 100) FROM orders WHERE customer_id = $1`, c.ID)
	if want == 0 {
		t.Fatal("the orders earn no points; pick a dearer product")
	}
	got, err := h.DB.PointsBalance(context.Background(), c.ID)
	if err != nil || got != want {
		t.Errorf("balance: got %d, %v; want %d", got, err, want)
	}
	r := h.Do(t, http.MethodGet, "/api/customers/me", "", "Authorization", "Bearer "+c.Token)
	var me struct {
		ID     uuid.UUID `json:"id"`
		Points int64     `json:"points"`
	}
	r.JSON(t, &me)
	if r.Status != http.StatusOK || me.ID != c.ID || me.Points != want {
		t.Errorf("GET /api/customers/me: got %d %+v, want 200 with id %s and %d points", r.Status, me, c.ID, want)
	}
}
