package chaos

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"exactlyonce/bench/chaos/chaosdb"
	"exactlyonce/fakestripe"
	"exactlyonce/internal/database"
)

// books are the two sides of a run's money, each read from its own
// server: the provider's ledger from the provider's database, the orders
// from the shop's. The provider's state is not the shop's to lose: a
// failover or a crash of the shop's database rolls back nothing the
// provider did, as with a real provider, so that a charge whose key or
// order the shop lost shows up here.
type books struct {
	charges []fakestripe.Intent
	orders  []chaosdb.ChaosOrderChargesRow
	// recorded is what the shop recorded as refunded of each order
	// (cancels, operators' refunds: issue 40), read by check only.
	recorded map[uuid.UUID]int64
}

// readBooks reads both sides.
func readBooks(ctx context.Context, shop, provider *database.DB) (books, error) {
	charges, err := fakestripe.Ledger(ctx, provider.Pool)
	if err != nil {
		return books{}, fmt.Errorf("read the provider's ledger: %w", err)
	}
	orders, err := chaosdb.New(shop.Conn()).ChaosOrderCharges(ctx)
	if err != nil {
		return books{}, fmt.Errorf("read the orders: %w", err)
	}
	return books{charges: charges, orders: orders}, nil
}

// chargesWithoutOrder are the succeeded charges no order holds and the
// reconciler has not refunded: a customer charged for nothing.
func (b books) chargesWithoutOrder() []fakestripe.Intent {
	held := make(map[string]bool, len(b.orders))
	for _, o := range b.orders {
		held[o.ChargeID] = true
	}
	var out []fakestripe.Intent
	for _, c := range b.charges {
		if c.Status == "succeeded" && !held[c.ID] && !c.Refunded {
			out = append(out, c)
		}
	}
	return out
}

// refundedOrders are the orders whose charge the provider refunded more
// (or less) of than the refunds the shop recorded of them: a refund
// nobody asked for gives the customer the order for free, or part of it;
// a cancel or an operator's refund is no violation, as long as the
// provider gave back exactly that.
func (b books) refundedOrders() []chaosdb.ChaosOrderChargesRow {
	refunded := map[string]int64{}
	for _, c := range b.charges {
		refunded[c.ID] = c.AmountRefunded
		if c.Refunded {
			refunded[c.ID] = max(c.AmountRefunded, c.Amount)
		}
	}
	var out []chaosdb.ChaosOrderChargesRow
	for _, o := range b.orders {
		if refunded[o.ChargeID] != b.recorded[o.ID] {
			out = append(out, o)
		}
	}
	return out
}

// ordersWithoutCharge are the orders not paid by a succeeded charge of
// their amount and currency.
func (b books) ordersWithoutCharge() []chaosdb.ChaosOrderChargesRow {
	byID := make(map[string]fakestripe.Intent, len(b.charges))
	for _, c := range b.charges {
		byID[c.ID] = c
	}
	var out []chaosdb.ChaosOrderChargesRow
	for _, o := range b.orders {
		c, ok := byID[o.ChargeID]
		if !ok || c.Status != "succeeded" || c.Amount != o.Amount || c.Currency != o.Currency {
			out = append(out, o)
		}
	}
	return out
}

// totals counts the provider's side for the report: intents succeeded,
// declined (their last confirm refused), refunded, and canceled with no
// charge (by the completer).
func (b books) totals() (succeeded, declined, refunds, canceled int64) {
	for _, c := range b.charges {
		switch {
		case c.Status == fakestripe.StatusSucceeded:
			succeeded++
		case len(c.LastPaymentError) > 0:
			declined++
		case c.Status == fakestripe.StatusCanceled:
			canceled++
		}
		if c.Refunded {
			refunds++
		}
	}
	return succeeded, declined, refunds, canceled
}
