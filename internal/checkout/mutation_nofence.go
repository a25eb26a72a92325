//go:build mutation_nofence

package checkout

import (
	"context"

	"github.com/google/uuid"

	"exactlyonce/internal/db"
)

// The mutation "the fence on the finish removed": the finish writes the
// order and the key's answer whatever the key's status and lock token, as
// naive implementations write it (the checkout tests' UseFinishWithoutGuard,
// in a binary). Every attempt that reaches the finish then writes: one
// paused before its finish, whose key a retry took over and finished
// meanwhile, writes a second order for the same charge and replaces the
// answer the client was given. The chaos run that shows it builds the shop
// with fault_pausefinish too (fault_pausefinish.go): a pause at that very
// moment, which a SIGSTOP from outside almost never lands on.
func init() {
	mutations = append(mutations, mutation{engine: func(e *Engine) {
		e.finish = func(ctx context.Context, p db.FinishOrderParams) (orderID uuid.UUID, err error) {
			// Open the key again and take its token, whoever holds it, in
			// the finish's transaction: the fenced statement then always
			// writes, even when another attempt finishes the key at once.
			err = e.db.InTxConn(ctx, func(conn db.DBTX) error {
				if err := conn.QueryRow(ctx, `UPDATE idem_keys SET status = 'started', response_status = NULL, response_body = NULL, finished_at = NULL
					WHERE scope = $1::uuid::text AND key = $2 RETURNING lock_token`, p.CustomerID, p.Key).Scan(&p.LockToken); err != nil {
					return err
				}
				orderID, err = db.New(conn).FinishOrder(ctx, p)
				return err
			})
			return orderID, err
		}
	}})
}
