package checkout

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
)

// storedAnswer returns the answer a finished key stored for this very
// request (same fingerprint), or nil when there is none. Place asks it only
// when the order cannot be priced: a replay must not depend on today's
// catalog, since the product may have left it or the catalog may fail to
// load, and the stored answer needs neither. The common replay is still
// answered by the claim, with no extra round trip.
func (e *Engine) storedAnswer(ctx context.Context, a Attempt) (*Result, error) {
	row, err := e.db.FinishedKey(ctx, db.FinishedKeyParams{CustomerID: a.CustomerID, Key: a.Key})
	if errors.Is(err, database.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read stored answer: %w", err)
	}
	if row.Status != "finished" || row.ResponseCode == nil || !bytes.Equal(row.Fingerprint, a.Fingerprint) {
		return nil, nil
	}
	return &Result{Status: int(*row.ResponseCode), Body: row.ResponseBody, Replayed: true}, nil
}
