package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"

	"exactlyonce/bench/chaos/chaosdb"
	"exactlyonce/fakestripe"
	"exactlyonce/internal/database"
	"exactlyonce/mailcatcher"
)

// The invariants of cancels and refunds (issue 40), checked over both
// sides' final state once the run has settled: money, stock and points add
// up, per order and per customer.
const (
	violRefundUnrecorded = "refund at the provider that the shop did not record"
	violRefundTwice      = "refund made twice at the provider"
	violRefundMissing    = "refund recorded but not at the provider"
	violRefundExceeds    = "refunds beyond the order's amount"
	violRefundPending    = "refund left pending"
	violCancelNotFull    = "cancelled order not refunded in full, or a refunded cancel's order not cancelled"
	violMoneyCustomer    = "customer's charges less refunds differ from their orders less their refunds"
	violStock            = "stock received differs from on hand + reserved + sold"
	violStockOrder       = "stock reservation that disagrees with its order"
	violPointsOrder      = "order whose reversals differ from its refunded total / 100"
	violPointsCustomer   = "customer's points differ from awards less reversals"
	violRefundNoReversal = "refund without its loyalty reversal"
	violRefundNoMail     = "refund without its sent-mail record"
	violRefundMailLost   = "refund mail recorded but not received"
)

// RefundTotals are what the books hold of refunds and stock at the end.
type RefundTotals struct {
	// Refunds the shop recorded as refunded (Cancels of them a cancel's),
	// Failed refused by the provider for good, Amount their sum; Cancelled
	// the orders cancelled; ProviderRefunds the provider's refunds of the
	// shop's refunds (the reconciler's are not counted).
	Refunds         int   `json:"refunds"`
	Cancels         int   `json:"cancels"`
	Failed          int   `json:"failed"`
	Amount          int64 `json:"amount"`
	Cancelled       int   `json:"cancelled_orders"`
	ProviderRefunds int   `json:"provider_refunds"`
	Reversed        int64 `json:"points_reversed"`
	Mails           int   `json:"mails"`
	// SoldOut counts the clients' 409 sold-out answers; Stock says what
	// each product that keeps stock holds.
	SoldOut int    `json:"sold_out"`
	Stock   string `json:"stock"`
}

// checkRefunds checks the refunds' invariants and adds what broke to rep.
func checkRefunds(ctx context.Context, shop, provider *database.DB, mails []mailcatcher.Message, rep *Report) error {
	q := chaosdb.New(shop.Conn())
	add := func(kind, example string) { rep.violate(kind, example) }
	intents, err := fakestripe.Ledger(ctx, provider.Pool)
	if err != nil {
		return fmt.Errorf("read the provider's ledger: %w", err)
	}
	made, err := fakestripe.RefundLedger(ctx, provider.Pool)
	if err != nil {
		return fmt.Errorf("read the provider's refunds: %w", err)
	}
	orders, err := q.ChaosOrderRefunds(ctx)
	if err != nil {
		return err
	}
	refunds, err := q.ChaosRefunds(ctx)
	if err != nil {
		return err
	}
	t := &rep.Refunds
	t.SoldOut = rep.Clients.SoldOut

	// Money, per refund: each recorded refund is one refund at the
	// provider, of its amount, of its order's charge; each of the
	// provider's refunds that names a refund of the shop's is recorded.
	byID := make(map[string]fakestripe.Refund, len(made))
	ofRefund := map[string][]fakestripe.Refund{}
	for _, m := range made {
		byID[m.ID] = m
		if id := m.Metadata["refund_id"]; id != "" {
			ofRefund[id] = append(ofRefund[id], m)
		}
	}
	chargeOf := make(map[uuid.UUID]string, len(orders))
	for _, o := range orders {
		chargeOf[o.ID] = o.ChargeID
	}
	recorded := map[string]bool{}
	for _, r := range refunds {
		ex := fmt.Sprintf("refund %s (%s of order %s, %d)", r.ID, r.Kind, r.OrderID, r.Amount)
		switch r.State {
		case "pending":
			add(violRefundPending, ex)
		case "failed":
			t.Failed++
		case "refunded":
			t.Refunds++
			t.Amount += r.Amount
			if r.Kind == "cancel" {
				t.Cancels++
			}
			recorded[r.ProviderRefundID] = true
			m, ok := byID[r.ProviderRefundID]
			switch {
			case !ok:
				add(violRefundMissing, ex+": the provider has no refund "+r.ProviderRefundID)
			case m.Amount != r.Amount || m.PaymentIntentID != chargeOf[r.OrderID] || m.Metadata["refund_id"] != r.ID.String():
				add(violRefundMissing, fmt.Sprintf("%s: the provider's %s is %d of %s for refund %q", ex, m.ID, m.Amount, m.PaymentIntentID, m.Metadata["refund_id"]))
			}
			if !r.Reversed {
				add(violRefundNoReversal, ex)
			}
			if !r.Mailed {
				add(violRefundNoMail, ex)
			}
		}
		if n := len(ofRefund[r.ID.String()]); n > 1 {
			add(violRefundTwice, fmt.Sprintf("%s: %d refunds at the provider", ex, n))
		}
	}
	for _, m := range made {
		if m.Metadata["refund_id"] == "" {
			continue // the reconciler's, of a charge no order holds (check.go judges those)
		}
		t.ProviderRefunds++
		if !recorded[m.ID] {
			add(violRefundUnrecorded, fmt.Sprintf("refund %s of %d of %s for refund %s", m.ID, m.Amount, m.PaymentIntentID, m.Metadata["refund_id"]))
		}
	}

	// Money, per order and per customer: what the provider kept of each
	// customer's charges is what their orders cost less what the shop
	// recorded as refunded. (Each order's charge refunded by exactly its
	// recorded refunds is check.go's refundedOrders.)
	intentOf := make(map[string]fakestripe.Intent, len(intents))
	for _, in := range intents {
		intentOf[in.ID] = in
	}
	type books struct{ kept, owed, awarded, reversed int64 }
	customers := map[uuid.UUID]*books{}
	for _, o := range orders {
		ex := fmt.Sprintf("order %s of %d (customer %s)", o.ID, o.Amount, o.CustomerID)
		if o.Held > o.Amount || o.Refunded > o.Amount {
			add(violRefundExceeds, fmt.Sprintf("%s: %d refunded, %d held by refunds", ex, o.Refunded, o.Held))
		}
		if in, ok := intentOf[o.ChargeID]; ok && in.AmountRefunded > in.Amount {
			add(violRefundExceeds, fmt.Sprintf("%s: the provider refunded %d of %d", ex, in.AmountRefunded, in.Amount))
		}
		if o.Cancelled {
			t.Cancelled++
		}
		if o.Cancelled != (o.Cancels > 0) || (o.Cancelled && o.Refunded != o.Amount) {
			add(violCancelNotFull, fmt.Sprintf("%s: cancelled %v, %d cancels refunded, %d refunded", ex, o.Cancelled, o.Cancels, o.Refunded))
		}
		if o.Reversed != o.Refunded/100 || (o.Cancelled && o.Reversed != o.Awarded) {
			add(violPointsOrder, fmt.Sprintf("%s: %d refunded, %d points awarded, %d reversed", ex, o.Refunded, o.Awarded, o.Reversed))
		}
		t.Reversed += o.Reversed
		b := customers[o.CustomerID]
		if b == nil {
			b = &books{}
			customers[o.CustomerID] = b
		}
		in := intentOf[o.ChargeID]
		b.kept += in.Amount - in.AmountRefunded
		b.owed += o.Amount - o.Refunded
		b.awarded += o.Awarded
		b.reversed += o.Reversed
	}
	for _, id := range slices.SortedFunc(maps.Keys(customers), func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) }) {
		b := customers[id]
		if b.kept != b.owed {
			add(violMoneyCustomer, fmt.Sprintf("customer %s: the provider kept %d, orders less refunds %d", id, b.kept, b.owed))
		}
		balance, err := shop.Queries.PointsBalance(ctx, id)
		if err != nil {
			return fmt.Errorf("points balance: %w", err)
		}
		if balance != b.awarded-b.reversed {
			add(violPointsCustomer, fmt.Sprintf("customer %s: balance %d, awards %d less reversals %d", id, balance, b.awarded, b.reversed))
		}
	}

	// Stock: every unit received is on hand, held by a key still running,
	// or sold; a cancel's units are back on hand (returned counts in none).
	stock, err := q.ChaosStock(ctx)
	if err != nil {
		return err
	}
	lines := make([]string, 0, len(stock))
	for _, s := range stock {
		lines = append(lines, fmt.Sprintf("%s %d received = %d on hand + %d reserved + %d sold (%d returned, %d released)",
			s.Sku, s.Received, s.OnHand, s.Reserved, s.Sold, s.Returned, s.Released))
		if s.Received != s.OnHand+s.Reserved+s.Sold || s.Reserved != 0 {
			add(violStock, lines[len(lines)-1])
		}
	}
	t.Stock = strings.Join(lines, "; ")
	wrong, err := q.ChaosStockOfOrders(ctx)
	if err != nil {
		return err
	}
	for _, r := range wrong {
		add(violStockOrder, fmt.Sprintf("key %s/%s: %d of %s %s, order %q cancelled %v", r.Scope, r.Key, r.Quantity, r.Sku, r.State, r.OrderID, r.Cancelled))
	}

	// One mail per refund: each recorded one was received by the mail
	// server (the same Message-ID however often it was sent).
	received := map[string]bool{}
	for _, m := range mails {
		id := strings.Trim(m.MessageID, "<>")
		if rest, ok := strings.CutPrefix(id, "order-refunded."); ok {
			received[strings.SplitN(rest, "@", 2)[0]] = true
		}
	}
	t.Mails = len(received)
	for _, r := range refunds {
		if r.Mailed && !received[r.ID.String()] {
			add(violRefundMailLost, fmt.Sprintf("refund %s", r.ID))
		}
	}
	return nil
}

// recordedRefunds is what the shop recorded as refunded of each order.
func recordedRefunds(ctx context.Context, q *chaosdb.Queries) (map[uuid.UUID]int64, error) {
	rows, err := q.ChaosRefunds(ctx)
	if err != nil {
		return nil, err
	}
	out := map[uuid.UUID]int64{}
	for _, r := range rows {
		if r.State == "refunded" {
			out[r.OrderID] += r.Amount
		}
	}
	return out, nil
}
