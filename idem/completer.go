package idem

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Settler settles an operation whose attempt died holding its key: the
// completer hands it the key, taken over with a fresh lease and its
// Payload, and the Settler must either finish it (with its own write, in
// one transaction: Lock.FinishTx) or release it when nothing happened
// (Lock.Release), so the client's retry starts afresh. An error leaves the
// key to the next pass, once the new lease runs out.
type Settler interface {
	Settle(ctx context.Context, l *Lock) error
}

// SettlerFunc adapts a function to Settler.
type SettlerFunc func(ctx context.Context, l *Lock) error

// Settle calls f.
func (f SettlerFunc) Settle(ctx context.Context, l *Lock) error { return f(ctx, l) }

// Completer finds started keys whose lease ran out and has a Settler settle
// them, one by one, each under a kept lease.
type Completer struct {
	Store   *Store
	Settler Settler
	Max     int // keys per pass; default 100
}

// Pass settles up to Max stuck keys and reports how many it handed over.
func (c *Completer) Pass(ctx context.Context) (int, error) {
	limit := c.Max
	if limit <= 0 {
		limit = 100
	}
	var errs []error
	n := 0
	for ; n < limit; n++ {
		sent := time.Now()
		row, err := c.Store.q.TakeStuck(ctx, c.Store.lease)
		if errors.Is(err, pgx.ErrNoRows) {
			break
		}
		if err != nil {
			return n, fmt.Errorf("take stuck key: %w", err)
		}
		l := &Lock{store: c.Store, Scope: row.Scope, Key: row.Key, OperationID: row.OperationID,
			Token: row.LockToken, Payload: row.Request, TakenOver: true, sent: sent}
		held, stop := l.Keep(ctx)
		if err := c.Settler.Settle(held, l); err != nil {
			errs = append(errs, fmt.Errorf("settle key %q: %w", l.Key, err))
		}
		stop()
	}
	return n, errors.Join(errs...)
}
