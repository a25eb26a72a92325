package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"exactlyonce/idem"
	"exactlyonce/internal/database"
)

// ErrNoSuchKey means the customer has no such key.
var ErrNoSuchKey = errors.New("no such key")

// KeyState is what became of a key: its stored outcome once finished,
// else whether an attempt still holds its lock.
type KeyState struct {
	Finished bool
	Result   Result // the stored outcome, Replayed, when Finished
	Held     bool   // an attempt holds the lock (by the database clock)
}

// State reads the customer's key, for a page that shows how an order is
// going. ErrNoSuchKey when there is none.
func (e *Engine) State(ctx context.Context, customer uuid.UUID, key string) (KeyState, error) {
	resp, err := e.keys.Get(ctx, customer.String(), key)
	var busy *idem.InProgressError
	switch {
	case errors.Is(err, idem.ErrNotFound):
		return KeyState{}, ErrNoSuchKey
	case errors.As(err, &busy):
		return KeyState{Held: busy.Held}, nil
	case err != nil:
		return KeyState{}, fmt.Errorf("read key: %w", database.Translate(err))
	}
	return KeyState{Finished: true, Result: Result{Status: resp.Status, Body: resp.Body, Replayed: true}}, nil
}

// Await waits until the attempt holding the key has finished or let its
// lock expire — the moment to call Place again — and reports true, or
// false when the deadline passes or ctx ends first. It waits with the kit's
// one wait loop (idem.Poll).
func (e *Engine) Await(ctx context.Context, customer uuid.UUID, key string, deadline time.Time) bool {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := idem.Poll(ctx, func(ctx context.Context) (bool, error) {
		s, err := e.State(ctx, customer, key)
		if ctx.Err() != nil {
			// The wait is over (Poll returns ctx's error), whatever the
			// read said: a deadline that passed before the first read must
			// not count as "stopped holding", or a caller that loops on
			// Place and Await would spin until the lock runs out.
			return false, nil
		}
		// An error is for Place to meet and report.
		return err != nil || !s.Held, nil
	})
	return err == nil
}
