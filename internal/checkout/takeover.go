package checkout

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"exactlyonce/idem"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
)

// recordTakeover is the order store's idem.Options.TookOver: the kit calls
// it inside the transaction that takes an order key over (a retry's claim,
// the completer's pass), so the "taken_over" event on the key's audit trail
// commits with the takeover or not at all. The operator's key page, the API's
// key events and the chaos runs' judgement of who took a key read it.
func recordTakeover(ctx context.Context, tx pgx.Tx, t idem.Takeover) error {
	err := database.TxQueries(tx).RecordTakeover(ctx, db.RecordTakeoverParams{
		Scope: t.Scope, Key: t.Key, ByCompleter: t.ByCompleter, Attempt: int32(t.Attempt), LockedUntil: t.LockedUntil,
	})
	if err != nil {
		return fmt.Errorf("record takeover: %w", err)
	}
	return nil
}
