package idem

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Takeover reports a key handed to a new attempt because its holder's lease
// ran out: a retry's claim, or the completer's pass.
type Takeover struct {
	Kind  string
	Scope string
	Key   string
	// ByCompleter is true for the completer's takeovers, false for a
	// retry's.
	ByCompleter bool
	// Attempt counts the completer's takeovers of the key, this one
	// included (zero for a retry's, which are not counted).
	Attempt int
	// LockedUntil is when the new attempt's lease runs out, by the
	// database clock.
	LockedUntil time.Time
}

// tookOver runs the store's TookOver hook, if any, in the takeover's
// transaction.
func (s *Store) tookOver(ctx context.Context, tx pgx.Tx, t Takeover) error {
	if s.onTakeover == nil {
		return nil
	}
	t.Kind = s.kind
	if err := s.onTakeover(ctx, tx, t); err != nil {
		return fmt.Errorf("record takeover: %w", err)
	}
	return nil
}
