package history

import (
	"os"
	"path/filepath"
	"testing"
)

// A clean history: one key answered 201, replayed byte for byte, a 409
// while it ran, a timeout, a 503 and a superseded attempt's 409 after it,
// a declined key, all stored as answered; the provider charged the order
// once and declined the other.
func cleanHistory() History {
	ok, declined := Hash([]byte(`{"order_id":"o1"}`)), Hash([]byte(`{"type":"/problems/payment-declined"}`))
	return History{
		Ops: []Op{
			{Client: 0, Customer: "c1", Key: "k1", Call: 0, Return: 50, Status: 409, Problem: "/problems/request-in-progress"},
			{Client: 1, Customer: "c1", Key: "k1", Call: 10, Return: 100, Status: 201, BodyHash: ok, OrderID: "o1", ChargeID: "pi_1"},
			{Client: 0, Customer: "c1", Key: "k1", Call: 60, Return: 90, Status: 0, Err: "timeout"},
			{Client: 0, Customer: "c1", Key: "k1", Call: 200, Return: 210, Status: 201, BodyHash: ok, OrderID: "o1", ChargeID: "pi_1", Replayed: true},
			{Client: 2, Customer: "c2", Key: "k2", Call: 0, Return: 30, Status: 402, BodyHash: declined, Problem: "/problems/payment-declined"},
			// After the success: an outage's 503, and the 409 of an attempt
			// that was taken over, say nothing of the key's answer.
			{Client: 2, Customer: "c1", Key: "k1", Call: 220, Return: 230, Status: 503, BodyHash: "x", Problem: "/problems/service-unavailable"},
			{Client: 3, Customer: "c1", Key: "k1", Call: 5, Return: 240, Status: 409, BodyHash: "y", Problem: "/problems/request-superseded"},
		},
		Intents: []Intent{{ID: "pi_1", Customer: "c1", Key: "k1", Status: "succeeded", Amount: 500},
			{ID: "pi_2", Customer: "c2", Key: "k2", Status: "requires_payment_method", Amount: 700}},
		Orders: []Order{{ID: "o1", Customer: "c1", Key: "k1", ChargeID: "pi_1", Amount: 500}},
		Keys: []Stored{{Customer: "c1", Key: "k1", Status: "finished", ResponseStatus: 201, BodyHash: ok, OrderID: "o1"},
			{Customer: "c2", Key: "k2", Status: "finished", ResponseStatus: 402, BodyHash: declined}},
	}
}

func TestCleanHistoryHasNoAnomaly(t *testing.T) {
	r := Check(cleanHistory(), "")
	if len(r.Anomalies) != 0 {
		t.Fatalf("got anomalies %+v, want none", r.Anomalies)
	}
	if r.Keys != 2 || r.Successes != 2 || r.Replays != 1 {
		t.Fatalf("got %d keys, %d successes, %d replays, want 2, 2, 1", r.Keys, r.Successes, r.Replays)
	}
}

// Each anomaly is made by one change to the clean history, and the checker
// must name it, with the shortest history that shows it.
func TestEachAnomalyIsFound(t *testing.T) {
	other := Hash([]byte(`{"order_id":"o2"}`))
	for _, tc := range []struct {
		name     string
		change   func(h *History)
		kind     string
		shortest int // lines of the minimal history, 0 for a direct check's
	}{
		{"two successes (the fence removed)", func(h *History) {
			h.Ops = append(h.Ops, Op{Client: 3, Customer: "c1", Key: "k1", Call: 300, Return: 310, Status: 201, BodyHash: other, OrderID: "o2", ChargeID: "pi_1"})
		}, TwoSuccesses, 2},
		{"a replay that differs by a byte", func(h *History) {
			h.Ops[3].BodyHash = Hash([]byte(`{"order_id": "o1"}`))
		}, ReplayDiffers, 2},
		{"the stored answer lost", func(h *History) { h.Keys = h.Keys[1:] }, AcknowledgedLost, 2},
		{"the stored answer overwritten", func(h *History) {
			h.Keys[0].BodyHash, h.Keys[0].OrderID = other, "o2"
		}, StoredDiffers, 2},
		{"in progress after the answer", func(h *History) {
			h.Ops = append(h.Ops, Op{Client: 3, Customer: "c1", Key: "k1", Call: 150, Return: 160, Status: 409, Problem: "/problems/request-in-progress"})
		}, OpenAfterAnswered, 2},
		{"a success and a refusal", func(h *History) {
			h.Ops = append(h.Ops, Op{Client: 3, Customer: "c2", Key: "k2", Call: 50, Return: 60, Status: 201, BodyHash: other, OrderID: "o2"})
		}, TwoAnswers, 2},
		{"a refunded success", func(h *History) { h.Intents[0].Refunded = true }, RefundedSuccess, 0},
		{"an order with no charge", func(h *History) { h.Orders[0].ChargeID = "pi_9" }, OrderNoCharge, 0},
		{"a charge with no order", func(h *History) {
			h.Intents = append(h.Intents, Intent{ID: "pi_3", Customer: "c3", Key: "k3", Status: "succeeded", Amount: 100})
		}, ChargeNoOrder, 0},
		{"a key with two orders", func(h *History) {
			h.Orders = append(h.Orders, Order{ID: "o2", Customer: "c1", Key: "k1", ChargeID: "pi_1", Amount: 500})
		}, KeyTwoOrders, 0},
		{"another customer's replay (the cache not keyed by customer)", func(h *History) {
			h.Ops = append(h.Ops, Op{Client: 4, Customer: "c4", Key: "k1", Call: 300, Return: 310, Status: 201,
				BodyHash: h.Ops[1].BodyHash, OrderID: "o1", ChargeID: "pi_1", Replayed: true})
		}, OtherCustomer, 0},
		{"a success whose order is gone", func(h *History) { h.Orders = nil }, SuccessOrderGone, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := cleanHistory()
			tc.change(&h)
			dir := t.TempDir()
			r := Check(h, dir)
			var got *Anomaly
			for i, a := range r.Anomalies {
				if a.Kind == tc.kind {
					got = &r.Anomalies[i]
				}
			}
			if got == nil {
				t.Fatalf("got %+v, want a %q", r.Anomalies, tc.kind)
			}
			if tc.shortest == 0 {
				return
			}
			if len(got.History) != tc.shortest {
				t.Fatalf("got a history of %d ops %q, want the minimal %d", len(got.History), got.History, tc.shortest)
			}
			if got.Visualization == "" {
				t.Fatalf("got no visualization (%s)", got.Detail)
			}
			if fi, err := os.Stat(got.Visualization); err != nil || fi.Size() == 0 || filepath.Dir(got.Visualization) != dir {
				t.Fatalf("visualization %s: %v", got.Visualization, err)
			}
		})
	}
}

func TestHistoryRoundTrips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.json")
	if err := cleanHistory().Write(path); err != nil {
		t.Fatal(err)
	}
	h, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(h.Ops), len(cleanHistory().Ops); got != want {
		t.Fatalf("got %d ops, want %d", got, want)
	}
	if r := Check(h, ""); len(r.Anomalies) != 0 {
		t.Fatalf("got %+v after a round trip, want none", r.Anomalies)
	}
}

// refundHistory is the clean history with issue 40's operations: the
// customer cancels order o1 (a 503 refund-pending, then the 201 taken
// over, replayed), a second cancel under another key is refused; an
// operator refunds part of o3 (a 303, the same form sent again at once
// answered in progress, then replayed), and a second operator's refund is
// refused (more than is left). The provider gave back what the shop
// recorded: all of o1's charge, part of o3's.
func refundHistory() History {
	h := cleanHistory()
	cancel := Hash([]byte(`{"id":"r1","order_id":"o1"}`))
	empty := Hash(nil)
	loc := "/orders/o3?refund=refunded"
	h.Ops = append(h.Ops,
		Op{Client: 4, Kind: KindCancel, Customer: "c1", Key: "ck1", Call: 300, Return: 310, Status: 503, Problem: "/problems/refund-pending", BodyHash: "p"},
		Op{Client: 4, Kind: KindCancel, Customer: "c1", Key: "ck1", Call: 320, Return: 330, Status: 201, BodyHash: cancel, RefundID: "r1"},
		Op{Client: 4, Kind: KindCancel, Customer: "c1", Key: "ck1", Call: 340, Return: 350, Status: 201, BodyHash: cancel, RefundID: "r1", Replayed: true},
		Op{Client: 4, Kind: KindCancel, Customer: "c1", Key: "ck2", Call: 360, Return: 370, Status: 409, Problem: "/problems/order-cancelled", BodyHash: "q"},
		Op{Client: 5, Kind: KindRefund, Customer: "operator", Key: "f1", Call: 300, Return: 340, Status: 303, BodyHash: empty, Location: loc},
		Op{Client: 6, Kind: KindRefund, Customer: "operator", Key: "f1", Call: 305, Return: 315, Status: 409, Problem: "/problems/request-in-progress", BodyHash: "t"},
		Op{Client: 6, Kind: KindRefund, Customer: "operator", Key: "f1", Call: 400, Return: 410, Status: 303, BodyHash: empty, Location: loc, Replayed: true},
		Op{Client: 7, Kind: KindRefund, Customer: "operator", Key: "f2", Call: 300, Return: 320, Status: 409, Problem: "/problems/refund-exceeds-charge", BodyHash: "u"},
	)
	h.Intents[0].Refunded, h.Intents[0].AmountRefunded = true, 500
	h.Intents = append(h.Intents, Intent{ID: "pi_3", Customer: "c3", Key: "k3", Status: "succeeded", Amount: 900, AmountRefunded: 300})
	h.Orders = append(h.Orders, Order{ID: "o3", Customer: "c3", Key: "k3", ChargeID: "pi_3", Amount: 900})
	h.Refunds = []Refund{{ID: "r1", Customer: "c1", OrderID: "o1", Amount: 500, ProviderRefundID: "re_1"},
		{ID: "r2", Customer: "c3", OrderID: "o3", Amount: 300, ProviderRefundID: "re_2"}}
	h.Keys = append(h.Keys,
		Stored{Kind: KindRefund, Customer: "c1", Key: "ck1", Status: "finished", ResponseStatus: 201, BodyHash: cancel, RefundID: "r1"},
		Stored{Kind: KindRefund, Customer: "operator", Key: "f1", Status: "finished", ResponseStatus: 303, BodyHash: empty, Location: loc})
	return h
}

func TestRefundHistoryHasNoAnomaly(t *testing.T) {
	r := Check(refundHistory(), "")
	if len(r.Anomalies) != 0 {
		t.Fatalf("got anomalies %+v, want none", r.Anomalies)
	}
	if r.Keys != 6 || r.Successes != 2 {
		t.Fatalf("got %d keys, %d successes, want 6 (2 orders, 4 refunds), 2 (the orders')", r.Keys, r.Successes)
	}
}

// Each refund anomaly is made by one change to refundHistory.
func TestEachRefundAnomalyIsFound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(h *History)
		kind   string
	}{
		{"a cancel's replay names another refund", func(h *History) {
			h.Ops = append(h.Ops, Op{Client: 8, Kind: KindCancel, Customer: "c1", Key: "ck1", Call: 500, Return: 510, Status: 201,
				BodyHash: Hash([]byte(`{"id":"r9"}`)), RefundID: "r9"})
		}, TwoSuccesses},
		{"an operator's form refused after it refunded", func(h *History) {
			h.Ops = append(h.Ops, Op{Client: 8, Kind: KindRefund, Customer: "operator", Key: "f1", Call: 500, Return: 510, Status: 409,
				Problem: "/problems/refund-exceeds-charge"})
		}, OpenAfterAnswered},
		{"a cancel's stored answer lost", func(h *History) { h.Keys = h.Keys[:len(h.Keys)-2] }, AcknowledgedLost},
		{"a refund at the provider the shop did not record", func(h *History) { h.Intents[2].AmountRefunded = 600 }, RefundedSuccess},
		{"a refund the shop recorded that the provider did not make", func(h *History) { h.Refunds = h.Refunds[:1] }, RefundedSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := refundHistory()
			tc.change(&h)
			if r := Check(h, ""); !r.Found(tc.kind) {
				t.Fatalf("got anomalies %+v, want %q", r.Anomalies, tc.kind)
			}
		})
	}
}
