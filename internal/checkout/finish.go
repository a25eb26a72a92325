package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/outbox"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/tracing"
)

type finishFunc func(ctx context.Context, p db.FinishOrderParams) (uuid.UUID, error)

// guardedFinish is the finish the order flow uses: FinishOrder writes only
// when the kit's idem_finish stored the answer, which it does only while the
// key is started and carries this attempt's lock token.
func (e *Engine) guardedFinish(ctx context.Context, p db.FinishOrderParams) (uuid.UUID, error) {
	return e.db.FinishOrder(ctx, p)
}

// finishOrder is phase 3 for a succeeded PaymentIntent: one statement that writes
// the order, enqueues its "order placed" jobs (internal/outbox) and stores
// the receipt as the key's response. The kit stores the body byte for byte,
// so the first answer and every replay are identical.
func (e *Engine) finishOrder(ctx context.Context, a Attempt, c claim, priced catalog.Priced, ch payment.Intent) (_ Result, err error) {
	ctx, span := e.startFinish(ctx, outcomeCharged)
	defer func() { tracing.End(span, err) }()
	orderID, err := uuid.NewV7()
	if err != nil {
		return Result{}, fmt.Errorf("order id: %w", err)
	}
	receipt := Receipt{
		OrderID: orderID, ChargeID: ch.ID, Amount: priced.Amount, Currency: priced.Currency,
		Status: "paid", Items: priced.Lines,
	}
	body, err := json.Marshal(receipt)
	if err != nil {
		return Result{}, fmt.Errorf("encode receipt: %w", err)
	}
	items, err := json.Marshal(priced.Lines)
	if err != nil {
		return Result{}, fmt.Errorf("encode items: %w", err)
	}
	event, detail := c.finishEvent(outcomeCharged)
	_, err = e.finish(ctx, db.FinishOrderParams{
		ResponseStatus: http.StatusCreated, ResponseBody: body,
		CustomerID: a.CustomerID, Key: a.Key, LockToken: c.token(),
		OrderID: orderID, Amount: priced.Amount, Currency: priced.Currency, ChargeID: ch.ID, Items: items,
		JobKinds: outbox.OrderPlacedKinds, JobMetadata: jobMetadata(ctx), Event: event, Detail: detail,
	})
	if errors.Is(err, database.ErrNotFound) {
		lost := e.lostFinish(ctx, a, c)
		e.checkOrphan(ctx, a, ch)
		return Result{}, lost
	}
	if err != nil {
		return Result{}, fmt.Errorf("finish order: %w", err)
	}
	return Result{Status: http.StatusCreated, Body: body}, nil
}

// finishDeclined stores a declined payment as the key's final answer: a
// retry will not change the bank's mind, so it gets the same 402.
func (e *Engine) finishDeclined(ctx context.Context, a Attempt, c claim, declined *payment.DeclinedError) (Result, error) {
	p := problem.PaymentDeclined.New(declined.Message)
	p.ChargeID = declined.IntentID
	p.DeclineCode = declined.Code
	return e.finishWithProblem(ctx, a, c, p, outcomeDeclined)
}

// finishNotCompleted stores the verdict that the operation's PaymentIntent
// was canceled with no charge, or never confirmed (by the completer): the attempt that claimed
// the key never charged, and now never will. The key is closed with a final answer
// rather than left for a client that may never return; a retry is told to
// start a new operation with a new key. detail is the answer's detail, ""
// for an interrupted request's; intentID, when set, names the PaymentIntent
// the request's own attempt found not charged (charge_id in the answer):
// the answer is then the request's verdict on its own payment, not the
// completer's on an interrupted one.
func (e *Engine) finishNotCompleted(ctx context.Context, a Attempt, c claim, detail, intentID string) (Result, error) {
	if detail == "" {
		detail = "the request that started this payment was interrupted before anything was charged"
	}
	p := problem.PaymentNotCompleted.New(detail)
	p.ChargeID = intentID
	return e.finishWithProblem(ctx, a, c, p, outcomeNotCompleted)
}

// abandonedDetail is the answer to an order whose shopper did not
// authenticate the payment with their bank within the AuthenticationWindow.
const abandonedDetail = "the card holder did not authenticate the payment with their bank (3-D Secure) in time, " +
	"so the payment was canceled before anything was charged"

// detail is the answer to a confirm that charged nothing and was canceled.
func (e *notChargedError) detail() string {
	if e.Status == payment.StatusRequiresAction && e.awaited {
		return abandonedDetail
	}
	if e.Status == payment.StatusRequiresAction {
		return "the card's bank asked the cardholder to authenticate the payment (3-D Secure) and the request named no return_url " +
			"to send them to, so the payment was canceled before anything was charged"
	}
	return "the payment was left " + e.Status + " by the payment provider, so it was canceled before anything was charged"
}

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

// finishWithProblem stores a final answer that wrote no order.
func (e *Engine) finishWithProblem(ctx context.Context, a Attempt, c claim, p problem.Problem, outcome string) (_ Result, err error) {
	ctx, span := e.startFinish(ctx, outcome)
	defer func() { tracing.End(span, err) }()
	event, detail := c.finishEvent(outcome)
	// The answer names the trace that decided it; a replay, which is this
	// very answer, names it too.
	p.Instance = tracing.Instance(ctx)
	body := p.JSON()
	_, err = e.db.FinishKey(ctx, db.FinishKeyParams{
		ResponseStatus: int32(p.Status), ResponseBody: body,
		CustomerID: a.CustomerID, Key: a.Key, LockToken: c.token(),
		Event: event, Detail: detail,
	})
	if errors.Is(err, database.ErrNotFound) {
		return Result{}, e.lostFinish(ctx, a, c)
	}
	if err != nil {
		return Result{}, fmt.Errorf("finish key: %w", err)
	}
	return Result{Status: p.Status, Body: body}, nil
}

// startFinish starts the span of a finish that stores outcome.
func (e *Engine) startFinish(ctx context.Context, outcome string) (context.Context, trace.Span) {
	return e.tracer.Start(ctx, spanFinish, trace.WithAttributes(attrOutcome.String(outcome)))
}

// jobMetadata is the metadata of the outbox jobs a finish enqueues: the
// finish's traceparent, which River's OpenTelemetry middleware turns into a
// link from each job's run to the finish (outbox.NewClient); {} when it is
// not traced.
func jobMetadata(ctx context.Context) json.RawMessage {
	tp := tracing.Traceparent(ctx)
	if tp == "" {
		return json.RawMessage(`{}`)
	}
	b, _ := json.Marshal(map[string]string{"traceparent": tp}) // a map of strings always encodes
	return b
}

// How an operation ended, in audit events and the completer's metrics.
const (
	outcomeCharged      = "charged"
	outcomeDeclined     = "declined"
	outcomeNotCompleted = "not_completed"
)

// Settled reports whether a settling outcome (Completer.SettleKey's)
// finished the key: the answer stored then is new, not a replay.
func Settled(outcome string) bool {
	switch outcome {
	case outcomeCharged, outcomeDeclined, outcomeNotCompleted:
		return true
	}
	return false
}

// finishEvent is the audit event a finish records: "finished" by a request,
// "recovered" (with what the completer found) by the completer.
func (c claim) finishEvent(outcome string) (event string, detail json.RawMessage) {
	if !c.byCompleter() {
		return "finished", json.RawMessage(`{}`)
	}
	detail, _ = json.Marshal(map[string]string{"outcome": outcome})
	return "recovered", detail
}

// lostFinish accounts for a finish that matched no row: a newer attempt took
// the key over, and this one wrote nothing.
func (e *Engine) lostFinish(ctx context.Context, a Attempt, c claim) error {
	e.metrics.FinishesLost.WithLabelValues(c.holder()).Inc()
	e.log.WarnContext(ctx, "finish lost to a newer attempt; nothing written",
		logging.Key(a.Key), "customer_id", a.CustomerID, "holder", c.holder())
	return ErrLockLost
}

// checkOrphan runs after a finish that held a succeeded charge lost its lock.
// Normally the newer holder of the key finds the same charge (the provider
// key is the operation's) and writes the order with it, or is writing it
// now. If instead the key is finished, or gone, with no order holding the
// charge, money was taken for nothing: that must never happen, so it is
// logged at ERROR with the charge id and counted, and the reconciler refunds
// it.
func (e *Engine) checkOrphan(ctx context.Context, a Attempt, ch payment.Intent) {
	if ch.Status != payment.StatusSucceeded {
		return
	}
	row, err := e.db.ChargeHasOrder(ctx, db.ChargeHasOrderParams{CustomerID: a.CustomerID, Key: a.Key, ChargeID: ch.ID})
	if err != nil {
		e.log.WarnContext(ctx, "check lost finish's charge", logging.Key(a.Key), "charge", ch.ID, "err", err)
		return
	}
	if row.HasOrder || row.KeyStatus == "started" {
		return
	}
	e.metrics.OrphanCharges.Inc()
	e.log.ErrorContext(ctx, "orphan charge: succeeded, its finish lost the lock, and no order holds it",
		logging.Key(a.Key), "customer_id", a.CustomerID, "charge", ch.ID, "amount", ch.Amount,
		"currency", ch.Currency, "key_status", row.KeyStatus)
}
