package checkout

import (
	"context"
	"encoding/json"

	"exactlyonce/internal/db"
)

// UseUnguardedFinish makes e finish orders the naive way, trusting that the
// attempt still owns its key. Tests use it to show what the lock token
// prevents; the order flow never does this.
func UseUnguardedFinish(e *Engine) {
	e.finish = func(ctx context.Context, p db.FinishOrderParams) (json.RawMessage, error) {
		return e.db.FinishOrderUnguarded(ctx, db.FinishOrderUnguardedParams{
			ResponseCode: p.ResponseCode, ResponseBody: p.ResponseBody,
			CustomerID: p.CustomerID, Key: p.Key,
			OrderID: p.OrderID, Amount: p.Amount, Currency: p.Currency, ChargeID: p.ChargeID, Items: p.Items,
		})
	}
}
