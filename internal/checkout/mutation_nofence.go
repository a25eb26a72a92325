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
// in a binary). Every attempt that reaches the finish then writes: a paused
// attempt resumed after a retry took its key over and finished it writes a
// second order for the same charge and replaces the answer the client was
// given.
//
// An attempt that resumes during its provider call is stopped before the
// finish by its own lease keeper, which cancels the call when a renewal
// finds the token gone or the lease lapsed (withLease): the fence the
// attempt keeps on itself, the first of the two. The mutation removes it
// too, as the lease hooks let a test (blocking in BeforeRenew and
// BeforeFence until the call ends), so that a chaos run's SIGSTOP shows
// what the finish's fence alone still stops.
func init() {
	mutations = append(mutations, mutation{config: func(cfg *Config) {
		never := func(ctx context.Context, _ Claimed) { <-ctx.Done() }
		cfg.Hooks.BeforeRenew, cfg.Hooks.BeforeFence = never, never
	}, engine: func(e *Engine) {
		fenced := e.finish
		e.finish = func(ctx context.Context, p db.FinishOrderParams) (uuid.UUID, error) {
			// Open the key again and take its token, whoever holds it:
			// the fenced statement then always writes.
			if err := e.db.Pool.QueryRow(ctx, `UPDATE idem_keys SET status = 'started', response_status = NULL, response_body = NULL, finished_at = NULL
				WHERE scope = $1::uuid::text AND key = $2 RETURNING lock_token`, p.CustomerID, p.Key).Scan(&p.LockToken); err != nil {
				return uuid.Nil, err
			}
			return fenced(ctx, p)
		}
	}})
}
