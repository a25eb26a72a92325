package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/problem"
)

type finishFunc func(ctx context.Context, p db.FinishOrderParams) (json.RawMessage, error)

// guardedFinish is the finish the order flow uses: FinishOrder only writes
// when the key is still started and carries this attempt's lock token.
func (e *Engine) guardedFinish(ctx context.Context, p db.FinishOrderParams) (json.RawMessage, error) {
	return e.db.FinishOrder(ctx, p)
}

// finishOrder is phase 3 for a successful charge: one statement that writes
// the order and stores the receipt as the key's response. The body returned
// is the stored one, so the first answer and every replay are byte-identical.
func (e *Engine) finishOrder(ctx context.Context, a Attempt, c claim, priced catalog.Priced, ch payment.Charge) (Result, error) {
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
	stored, err := e.finish(ctx, db.FinishOrderParams{
		ResponseCode: http.StatusCreated, ResponseBody: body,
		CustomerID: a.CustomerID, Key: a.Key, LockToken: c.token,
		OrderID: orderID, Amount: priced.Amount, Currency: priced.Currency, ChargeID: ch.ID, Items: items,
	})
	if errors.Is(err, database.ErrNotFound) {
		return Result{}, ErrLockLost
	}
	if err != nil {
		return Result{}, fmt.Errorf("finish order: %w", err)
	}
	return Result{Status: http.StatusCreated, Body: stored}, nil
}

// finishDeclined stores a declined payment as the key's final answer: a
// retry will not change the bank's mind, so it gets the same 402.
func (e *Engine) finishDeclined(ctx context.Context, a Attempt, c claim, declined *payment.DeclinedError) (Result, error) {
	p := problem.PaymentDeclined.New(declined.Message)
	p.ChargeID = declined.ChargeID
	stored, err := e.db.FinishKey(ctx, db.FinishKeyParams{
		ResponseCode: http.StatusPaymentRequired, ResponseBody: p.JSON(),
		CustomerID: a.CustomerID, Key: a.Key, LockToken: c.token,
	})
	if errors.Is(err, database.ErrNotFound) {
		return Result{}, ErrLockLost
	}
	if err != nil {
		return Result{}, fmt.Errorf("finish declined: %w", err)
	}
	return Result{Status: http.StatusPaymentRequired, Body: stored}, nil
}
