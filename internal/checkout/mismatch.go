package checkout

import (
	"context"
	"errors"
	"fmt"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/payment"
)

// mismatchDetail is the answer to an order whose intent charged another
// amount or currency.
const mismatchDetail = "the payment provider charged another amount than the order's, " +
	"so no order was written and the charge is refunded in full"

// finishMismatch settles an intent that succeeded for another amount or
// currency than the order's, in the request path and in the completer
// alike. It is never an order: one would say the customer paid for it when
// they paid something else. The provider key is derived from the operation
// alone and the intent's parameters from the key's row, so this is a bug,
// ours or the provider's, and it is logged at ERROR for an operator.
//
// A succeeded intent cannot be canceled, so the key is finished as not
// completed (the client starts again with a new key) and the charge is
// refunded in full, under payment.RefundKey, the key the reconciler and the
// webhook handler refund with, so that it is refunded once however many
// ask; the refund is recorded as theirs are, with a "refunded" event on the
// key's trail. The finish comes first: if it loses the key, the newer
// holder finds the same intent and settles it the same way. A refund that
// fails now is only logged: the reconciler refunds every succeeded intent
// whose key finished without an order.
func (e *Engine) finishMismatch(ctx context.Context, payments Payments, a Attempt, c claim, priced catalog.Priced, in payment.Intent) (Result, error) {
	log := e.log.With(logging.Key(a.Key), "customer_id", a.CustomerID, "payment_intent", in.ID)
	log.ErrorContext(ctx, "payment intent charged another amount than its order's: no order written, the charge is refunded",
		"charged", in.Amount, "charged_currency", in.Currency, "order_amount", priced.Amount, "order_currency", priced.Currency)
	res, err := e.finishNotCompleted(ctx, a, c, mismatchDetail, in.ID)
	if err != nil {
		return res, err
	}
	if err := e.refund(ctx, payments, a, in); err != nil {
		log.ErrorContext(ctx, "refund of a charge of another amount failed; the reconciler refunds it", "err", err)
	}
	return res, nil
}

// refund refunds in at the provider and records the refund.
func (e *Engine) refund(ctx context.Context, payments Payments, a Attempt, in payment.Intent) error {
	refundID := ""
	r, err := e.callRefund(ctx, payments, in.ID)
	switch {
	case errors.Is(err, payment.ErrAlreadyRefunded):
		refundID = "refunded by another refund"
	case err != nil:
		return err
	default:
		refundID = r.ID
	}
	_, err = e.db.RecordRefund(ctx, db.RecordRefundParams{
		ChargeID: in.ID, RefundID: refundID, CustomerID: a.CustomerID, Key: a.Key,
		Amount: in.Amount, Currency: in.Currency,
	})
	if err != nil && !errors.Is(err, database.ErrNotFound) { // no row: recorded already
		return fmt.Errorf("record refund: %w", err)
	}
	return nil
}

// callRefund sends the refund, bounded as every provider call is.
func (e *Engine) callRefund(ctx context.Context, payments Payments, intentID string) (r payment.Refund, err error) {
	_, err = e.callProvider(ctx, "refund", func(ctx context.Context) (payment.Intent, error) {
		r, err = payments.Refund(ctx, payment.RefundKey(intentID), intentID)
		return payment.Intent{}, err
	})
	return r, err
}
