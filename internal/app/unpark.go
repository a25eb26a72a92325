package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/idem"
)

// unpark is `web unpark SCOPE KEY`: the operator's hand back to the
// completer for a key it parked (docs/operations.md, poison keys), once the
// cause of its settling's failures is dealt with. Writing idem_keys by hand
// is outside the kit's contract; this goes through it (idem.Store.Unpark).
func unpark(ctx context.Context, pool *pgxpool.Pool, args []string, log *slog.Logger) error {
	if len(args) != 2 {
		return errors.New("usage: web unpark SCOPE KEY (the key's scope and key, as the admin's key pages and idem_keys_v1 show them)")
	}
	err := idem.NewStore(pool, idem.Options{}).Unpark(ctx, args[0], args[1])
	if errors.Is(err, idem.ErrNotFound) {
		return fmt.Errorf("unpark: no parked key %q in scope %q", args[1], args[0])
	}
	if err != nil {
		return fmt.Errorf("unpark: %w", err)
	}
	log.Info("unparked: the completer's next pass settles it", "scope", args[0], "key", args[1])
	return nil
}
