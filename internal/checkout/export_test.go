package checkout

import (
	"context"
	"encoding/json"

	"exactlyonce/internal/db"
)

// The mutation tests remove one guard of the one-statement finish
// (queries/orders.sql, FinishOrder: WHERE status = 'started' AND
// lock_token = @lock_token) and show what that guard buys. Rather than keep
// a second copy of the statement, each mutation runs the production
// statement after making the removed guard pass whatever the row holds.

// UseFinishWithoutToken removes only the lock-token condition: the attempt
// finishes with whatever token the key holds now, as if the statement did
// not compare tokens. The status = 'started' guard still holds, so whichever
// attempt finishes first wins, even a stale one, and the other finds the
// key finished.
func UseFinishWithoutToken(e *Engine) {
	real := e.finish
	e.finish = func(ctx context.Context, p db.FinishOrderParams) (json.RawMessage, error) {
		if err := e.db.Pool.QueryRow(ctx, `SELECT lock_token FROM idempotency_keys WHERE customer_id = $1 AND key = $2`,
			p.CustomerID, p.Key).Scan(&p.LockToken); err != nil {
			return nil, err
		}
		return real(ctx, p)
	}
}

// UseFinishWithoutGuard removes both conditions, as naive implementations
// write the finish: every attempt that reaches it marks the key finished
// with its own answer (overwriting any earlier one) and writes its order.
func UseFinishWithoutGuard(e *Engine) {
	real := e.finish
	e.finish = func(ctx context.Context, p db.FinishOrderParams) (json.RawMessage, error) {
		if err := e.db.Pool.QueryRow(ctx, `UPDATE idempotency_keys SET status = 'started', response_code = NULL, response_body = NULL
			WHERE customer_id = $1 AND key = $2 RETURNING lock_token`, p.CustomerID, p.Key).Scan(&p.LockToken); err != nil {
			return nil, err
		}
		return real(ctx, p)
	}
}
