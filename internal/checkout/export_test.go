package checkout

import (
	"context"

	"github.com/google/uuid"

	"exactlyonce/internal/db"
)

// The mutation tests remove one guard of the one-statement finish
// (queries/orders.sql, FinishOrder, through the kit's idem_finish: WHERE
// status = 'started' AND lock_token = p_lock_token) and show what that guard buys. Rather than keep
// a second copy of the statement, each mutation runs the production
// statement after making the removed guard pass whatever the row holds.

// UseFinishWithoutToken removes only the lock-token condition: the attempt
// finishes with whatever token the key holds now, as if the statement did
// not compare tokens. The status = 'started' guard still holds, so whichever
// attempt finishes first wins, even a stale one, and the other finds the
// key finished.
func UseFinishWithoutToken(e *Engine) {
	real := e.finish
	e.finish = func(ctx context.Context, p db.FinishOrderParams) (uuid.UUID, error) {
		if err := e.db.Pool.QueryRow(ctx, `SELECT lock_token FROM idem_keys WHERE scope = $1::uuid::text AND key = $2`,
			p.CustomerID, p.Key).Scan(&p.LockToken); err != nil {
			return uuid.Nil, err
		}
		return real(ctx, p)
	}
}

// UseFinishWithoutGuard removes both conditions, as naive implementations
// write the finish: every attempt that reaches it marks the key finished
// with its own answer (overwriting any earlier one) and writes its order.
func UseFinishWithoutGuard(e *Engine) {
	real := e.finish
	e.finish = func(ctx context.Context, p db.FinishOrderParams) (uuid.UUID, error) {
		if err := e.db.Pool.QueryRow(ctx, `UPDATE idem_keys SET status = 'started', response_status = NULL, response_body = NULL, finished_at = NULL
			WHERE scope = $1::uuid::text AND key = $2 RETURNING lock_token`, p.CustomerID, p.Key).Scan(&p.LockToken); err != nil {
			return uuid.Nil, err
		}
		return real(ctx, p)
	}
}

// UseFinishThatFails makes the finish statement fail after idem_finish has
// stored the answer in it: the order's amount breaks its CHECK (amount > 0),
// so PostgreSQL aborts the whole statement, as it would for any error in
// it, and the answer, the order and the outbox's jobs all roll back.
func UseFinishThatFails(e *Engine) {
	real := e.finish
	e.finish = func(ctx context.Context, p db.FinishOrderParams) (uuid.UUID, error) {
		p.Amount = 0
		return real(ctx, p)
	}
}
