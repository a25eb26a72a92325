package refund

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"exactlyonce/idem"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
)

// reserved is a refund's row with what the provider call needs of its order.
type reserved struct {
	row      db.OrderRefund
	intentID string
	currency string
}

// reserve writes the refund's row for the key l holds, or returns the row an
// earlier attempt at the key wrote. It runs in one transaction that holds
// the key's row (HoldRefundKey: no takeover or release of the key commits
// before it) and the order's (refunds of one order reserve one at a time).
// A refusal (ErrNotFound, ErrCancelled, *WindowClosedError, *ExceedsError)
// reserves nothing.
func (s *Service) reserve(ctx context.Context, l *idem.Lock, ask Ask) (reserved, error) {
	var out reserved
	err := s.db.InTx(ctx, func(q *db.Queries) error {
		out = reserved{}
		token, err := uuid.Parse(l.Token)
		if err != nil {
			return fmt.Errorf("lock token: %w", err)
		}
		op, err := q.HoldRefundKey(ctx, db.HoldRefundKeyParams{Scope: l.Scope, Key: l.Key, LockToken: token})
		if errors.Is(err, database.ErrNotFound) {
			return idem.ErrLockLost
		}
		if err != nil {
			return fmt.Errorf("hold refund key: %w", err)
		}
		o, err := q.LockOrderForRefund(ctx, db.LockOrderForRefundParams{CustomerID: ask.CustomerID, OrderID: ask.OrderID})
		if errors.Is(err, database.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("lock order: %w", err)
		}
		out.intentID, out.currency = o.ChargeID, o.Currency
		// An attempt that took the key over carries on with what the
		// first reserved, whatever the order is like now.
		row, err := q.RefundOfKey(ctx, db.RefundOfKeyParams{Scope: l.Scope, Key: l.Key})
		if err == nil {
			out.row = row
			return nil
		}
		if !errors.Is(err, database.ErrNotFound) {
			return fmt.Errorf("refund of key: %w", err)
		}
		left, err := q.RefundLeft(ctx, db.RefundLeftParams{CustomerID: ask.CustomerID, OrderID: ask.OrderID})
		if err != nil {
			return fmt.Errorf("refund left: %w", err)
		}
		amount := ask.Amount
		if ask.Kind == KindCancel {
			switch {
			case o.CancelledAt != nil:
				return ErrCancelled
			case seconds(o.AgeSeconds) > s.cfg.CancelWindow:
				return &WindowClosedError{Window: s.cfg.CancelWindow}
			}
			amount = left
		}
		if amount <= 0 || amount > left {
			return &ExceedsError{Asked: amount, Left: left, Currency: o.Currency}
		}
		out.row, err = q.ReserveRefund(ctx, db.ReserveRefundParams{Scope: l.Scope, Key: l.Key, ID: op,
			CustomerID: ask.CustomerID, OrderID: ask.OrderID, Kind: ask.Kind, Amount: amount, Reason: ask.Reason})
		if err != nil {
			return fmt.Errorf("reserve refund: %w", err)
		}
		return nil
	})
	return out, err
}

// refusal reports whether err refuses the ask before anything was reserved.
func refusal(err error) bool {
	_, window := errors.AsType[*WindowClosedError](err)
	_, exceeds := errors.AsType[*ExceedsError](err)
	return window || exceeds || errors.Is(err, ErrNotFound) || errors.Is(err, ErrCancelled)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
