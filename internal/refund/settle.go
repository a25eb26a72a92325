package refund

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"exactlyonce/idem"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
)

// Settler settles a refund key whose attempt died or whose client stopped
// retrying (the kit's completer takes it over first). A key that reserved
// nothing is released: no money moved, and the client's retry asks afresh.
// A reserved refund is carried on: the provider is asked again under the
// refund's own key, which it answers with the one refund, and the key is
// finished with the answer of the channel that asked.
func (s *Service) Settler() idem.Settler {
	return idem.SettlerFunc(func(ctx context.Context, l *idem.Lock) (string, error) {
		row, err := s.db.RefundOfKey(ctx, db.RefundOfKeyParams{Scope: l.Scope, Key: l.Key})
		if errors.Is(err, database.ErrNotFound) {
			return "released: nothing reserved", l.Release(ctx)
		}
		if err != nil {
			return "", fmt.Errorf("refund of key: %w", err)
		}
		var p payload
		if err := json.Unmarshal(l.Payload, &p); err != nil {
			return "", idem.Poison(fmt.Errorf("refund payload: %w", err))
		}
		answer, ok := s.answers[p.Ask.Channel]
		if !ok {
			return "", idem.Poison(fmt.Errorf("refund: no answer for channel %q", p.Ask.Channel))
		}
		p.Ask.CustomerID, p.Ask.OrderID = row.CustomerID, row.OrderID
		res, err := s.reserve(ctx, l, p.Ask) // finds the row: reserves nothing new
		if err != nil {
			return "", err
		}
		if _, err := s.carry(ctx, ctx, l, res, answer, func() {}); err != nil {
			return "", err
		}
		return "finished: " + row.Kind, nil
	})
}
