package api_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
)

// placeMug places one order of mug-espresso for c and returns its id.
func placeMug(t *testing.T, h *apptest.Harness, c apptest.Customer, quantity int) uuid.UUID {
	t.Helper()
	r := h.PlaceOrder(t, c, uuid.NewString(), `{"items":[{"sku":"mug-espresso","quantity":`+strconv.Itoa(quantity)+`}],"card":"4242 4242 4242 4242"}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("place order: got %d %s", r.Status, r.Body)
	}
	var placed struct {
		OrderID uuid.UUID `json:"order_id"`
	}
	r.JSON(t, &placed)
	return placed.OrderID
}

// A customer's cancel under its key: 201 with the refund, the same bytes
// replayed (marked) however often it is sent again; a cancel under another
// key is refused as order-cancelled and refunds nothing; the order reads
// cancelled, its refunds list the one refund, the provider holds one refund
// of the whole amount, and the stock it sold is back on hand.
func TestCancelOrderOnce(t *testing.T) {
	t.Parallel()
	s := loadSpec(t)
	h := apptest.New(t, apptest.WithoutWebhooks)
	if _, err := h.DB.ReceiveStock(context.Background(), db.ReceiveStockParams{Sku: "mug-espresso", Quantity: 5}); err != nil {
		t.Fatal(err)
	}
	c := h.NewCustomer(t)
	order := placeMug(t, h, c, 2)
	if left := h.Count(t, `SELECT on_hand FROM stock WHERE sku = 'mug-espresso'`); left != 3 {
		t.Fatalf("on hand after the order: %d, want 3", left)
	}
	cancel := func(want int, key string) apptest.Response {
		t.Helper()
		return s.do(t, h, want, http.MethodPost, "/api/orders/"+order.String()+"/cancel", "", "Authorization", "Bearer "+c.Token, "Idempotency-Key", key)
	}
	first := cancel(http.StatusCreated, `"cancel-1"`)
	if first.Status != http.StatusCreated || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the cancel: got %d %s, want 201 not replayed", first.Status, first.Body)
	}
	var refunded struct {
		Kind, State, ProviderRefundID string
		Amount                        int64
	}
	first.JSON(t, &refunded)
	for range 2 {
		again := cancel(http.StatusCreated, `"cancel-1"`)
		if again.Status != http.StatusCreated || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("the cancel again: got %d %s (replayed %q), want the same 201 replayed", again.Status, again.Body, again.Header.Get("Idempotent-Replayed"))
		}
	}
	apptest.WantProblem(t, cancel(http.StatusConflict, `"cancel-2"`), problem.OrderCancelled)
	var listed []struct {
		Kind, State string
		Amount      int64
	}
	s.do(t, h, http.StatusOK, http.MethodGet, "/api/orders/"+order.String()+"/refunds", "", "Authorization", "Bearer "+c.Token).JSON(t, &listed)
	if len(listed) != 1 || listed[0].Kind != "cancel" || listed[0].State != "refunded" {
		t.Errorf("the order's refunds: %+v, want its one cancel, refunded", listed)
	}

	var got struct {
		Status string `json:"status"`
		Amount int64  `json:"amount"`
	}
	s.do(t, h, http.StatusOK, http.MethodGet, "/api/orders/"+order.String(), "", "Authorization", "Bearer "+c.Token).JSON(t, &got)
	if got.Status != "cancelled" || refunded.Amount != got.Amount || refunded.Kind != "cancel" || refunded.State != "refunded" {
		t.Errorf("the order reads %+v and its cancel %+v: want cancelled, refunded in full", got, refunded)
	}
	if n := h.Count(t, `SELECT count(*) FROM order_refunds WHERE order_id = $1 AND state = 'refunded'`, order); n != 1 {
		t.Errorf("refunds recorded: %d, want 1", n)
	}
	if n := h.Count(t, `SELECT count(*) FROM fakestripe.refunds`); n != 1 {
		t.Errorf("refunds at the provider: %d, want 1", n)
	}
	if left := h.Count(t, `SELECT on_hand FROM stock WHERE sku = 'mug-espresso'`); left != 5 {
		t.Errorf("on hand after the cancel: %d, want 5 (the 2 sold back)", left)
	}
	apptest.WantProblem(t, s.do(t, h, http.StatusNotFound, http.MethodPost, "/api/orders/"+uuid.NewString()+"/cancel", "", "Authorization", "Bearer "+c.Token,
		"Idempotency-Key", `"cancel-3"`), problem.NotFound)
	other := h.NewCustomer(t)
	apptest.WantProblem(t, h.Do(t, http.MethodPost, "/api/orders/"+order.String()+"/cancel", "", "Authorization", "Bearer "+other.Token,
		"Idempotency-Key", `"cancel-1"`), problem.NotFound)
}

// Eight cancels of one order at once, each under a key of its own (eight
// tabs): one refund, at the provider and in the shop; every other cancel is
// told the order is cancelled, or that nothing is left, and refunds nothing.
func TestCancelsRacing(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks)
	c := h.NewCustomer(t)
	order := placeMug(t, h, c, 1)
	const n = 8
	statuses := make([]apptest.Response, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			statuses[i] = h.Do(t, http.MethodPost, "/api/orders/"+order.String()+"/cancel", "", "Authorization", "Bearer "+c.Token,
				"Idempotency-Key", `"race-`+strconv.Itoa(i)+`"`)
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for _, r := range statuses {
		switch {
		case r.Status == http.StatusCreated:
			created++
		case r.Status == http.StatusConflict:
		default:
			t.Errorf("a racing cancel: got %d %s, want 201 or 409", r.Status, r.Body)
		}
	}
	if created != 1 {
		t.Errorf("cancels that refunded: %d, want 1", created)
	}
	if got := h.Count(t, `SELECT count(*) FROM fakestripe.refunds`); got != 1 {
		t.Errorf("refunds at the provider: %d, want 1", got)
	}
	if got := h.Count(t, `SELECT count(*) FROM order_refunds WHERE state <> 'failed'`); got != 1 {
		t.Errorf("refunds recorded: %d, want 1", got)
	}
}
