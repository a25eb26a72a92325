package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/payment"
)

// Provider is the part of the payment provider the reconciler uses.
// *payment.Client satisfies it.
type Provider interface {
	ListCharges(ctx context.Context, after string, limit int) (payment.ChargePage, error)
	Refund(ctx context.Context, idempotencyKey, chargeID string) (payment.Refund, error)
}

// ReconcilerHooks let tests force an interleaving of two reconcilers.
type ReconcilerHooks struct {
	// BeforeRefund runs when a reconciler has found an orphan charge and is
	// about to refund it.
	BeforeRefund func(ctx context.Context, chargeID string)
	// AfterRefund runs when the provider has refunded a charge and the
	// refund is not recorded yet.
	AfterRefund func(ctx context.Context, chargeID string)
}

// ReconcilerConfig tunes a Reconciler.
type ReconcilerConfig struct {
	// PageSize is how many charges one list call asks for (default 100).
	PageSize int
	// Lag keeps the cursor behind the newest charges (default a minute).
	// Charge ids are time-ordered, but a charge whose transaction commits
	// late can appear in the list after a newer one: the cursor never
	// passes a charge younger than Lag, so such a charge is still read by a
	// later pass. Reading a charge twice is harmless.
	Lag time.Duration
	// LostAfter is how long a succeeded charge must stay unclaimed (no
	// order holds it, no key row carries its provider key) between two
	// passes before it is taken for a lost key's and refunded (default a
	// minute; the shop passes its LOCK_TIMEOUT). The key row is committed
	// before the provider is called, so an unclaimed charge has lost its
	// key, to a failover or a restore; the wait only makes sure the pass
	// did not meet something in flight.
	LostAfter time.Duration
	Hooks     ReconcilerHooks
}

// Reconciler is defence in depth behind the engine: it reads every charge the
// provider made, from a cursor shared by all instances, and matches each to
// an order. A succeeded charge that no order holds, whose key is finished
// (or gone) without one, is money taken for nothing: the reconciler refunds
// it, records a "refunded" event in the key's audit trail and counts it.
//
// Several instances may reconcile at once without coordination: the refund's
// idempotency key is derived from the charge, so the provider refunds once
// however many reconcilers ask, and the record of the refund is written once
// (ON CONFLICT DO NOTHING), so only one of them logs and counts it. A charge
// whose key is still started is left alone: its operation is in progress,
// and the engine or the completer will write its order.
type Reconciler struct {
	db       *database.DB
	provider Provider
	cfg      ReconcilerConfig
	metrics  *metrics.Metrics
	log      *slog.Logger
}

// NewReconciler returns a reconciler. A nil m counts into a registry nobody
// reads.
func NewReconciler(d *database.DB, provider Provider, cfg ReconcilerConfig, m *metrics.Metrics, log *slog.Logger) *Reconciler {
	if cfg.PageSize <= 0 {
		cfg.PageSize = 100
	}
	if cfg.Lag == 0 {
		cfg.Lag = time.Minute
	}
	if cfg.LostAfter <= 0 {
		cfg.LostAfter = time.Minute
	}
	if m == nil {
		m = metrics.New()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reconciler{db: d, provider: provider, cfg: cfg, metrics: m, log: log}
}

// Results of examining one charge, the values of the reconciler metric's
// result label.
const (
	reconciledMatched      = "matched"
	reconciledNotSucceeded = "not_succeeded"
	reconciledRefunded     = "refunded"
	reconciledPending      = "pending"
	reconciledParked       = "parked"
	reconciledUnknownKey   = "unknown_key"
	reconciledOrphan       = "orphan"
	reconciledLostKey      = "lost_key"
	reconciledRefundFailed = "refund_failed"
)

// Reconciled is what one pass did.
type Reconciled struct {
	// Examined counts the charges read; Refunded the orphans this pass
	// refunded and recorded (another instance may have recorded one first).
	Examined, Refunded int
	// Cursor is where the next pass starts.
	Cursor string
}

// Pass reads the provider's charges after the cursor, page by page, settles
// each, and moves the cursor past the ones it settled for good. The cursor
// stops before the first charge it cannot settle yet (its key is still
// started, its refund was refused, or it is younger than Lag), so that a
// later pass reads that charge again; the pass itself reads on to the end,
// so an orphan after it is refunded now.
func (r *Reconciler) Pass(ctx context.Context) (Reconciled, error) {
	var out Reconciled
	start, err := r.db.ReconcilerCursor(ctx)
	if err != nil {
		return out, fmt.Errorf("reconciler cursor: %w", err)
	}
	out.Cursor = start
	after, held := start, false
	defer func() {
		if out.Cursor == start {
			return
		}
		if err := r.db.AdvanceReconcilerCursor(context.WithoutCancel(ctx), out.Cursor); err != nil {
			r.log.WarnContext(ctx, "reconciler: save cursor", "err", err)
		}
	}()
	for {
		page, err := r.provider.ListCharges(ctx, after, r.cfg.PageSize)
		if err != nil {
			return out, fmt.Errorf("reconciler: %w", err)
		}
		for _, ch := range page.Charges {
			result, err := r.reconcile(ctx, ch)
			if err != nil {
				return out, fmt.Errorf("reconcile charge %s: %w", ch.ID, err)
			}
			out.Examined++
			if result == reconciledOrphan || result == reconciledLostKey {
				out.Refunded++
			}
			r.metrics.Reconciled.WithLabelValues(result).Inc()
			if result == reconciledPending || result == reconciledUnknownKey || result == reconciledRefundFailed ||
				time.Since(ch.Created) < r.cfg.Lag {
				held = true
			}
			if !held {
				out.Cursor = ch.ID
			}
			after = ch.ID
		}
		if !page.HasMore || len(page.Charges) == 0 {
			return out, nil
		}
	}
}

// reconcile examines one charge and refunds it if it is an orphan.
func (r *Reconciler) reconcile(ctx context.Context, ch payment.ListedCharge) (string, error) {
	if ch.Status != payment.StatusSucceeded {
		return reconciledNotSucceeded, nil
	}
	m, err := r.db.MatchCharge(ctx, db.MatchChargeParams{ChargeID: ch.ID, ProviderKey: ch.IdempotencyKey})
	if err != nil {
		return "", fmt.Errorf("match charge: %w", err)
	}
	orphan := !m.HasOrder && m.KeyStatus != "started" // finished without an order, or lost
	switch {
	// A refunded orphan whose refund is not recorded is not done: a
	// reconciler refunded it and stopped before recording. It goes on to
	// the refund below, which replays by its key (RefundKey), so the
	// record, event and metric are written once.
	case ch.Refunded && (m.RefundRecorded || !orphan):
		return reconciledRefunded, nil
	case m.HasOrder:
		return reconciledMatched, nil
	case m.KeyStatus == "started" && m.KeyParked:
		// The completer parked the key for an operator: no order will
		// come by itself, and holding the cursor for it would hold it for
		// ever. The operator who settles the key decides about its charge
		// (the key's audit trail and this line name it).
		r.log.ErrorContext(ctx, "reconciler: succeeded charge of a parked key; left for the operator who settles the key",
			"charge", ch.ID, "amount", ch.Amount, "currency", ch.Currency, logging.Key(m.Key), "customer_id", m.CustomerID)
		return reconciledParked, nil
	case m.KeyStatus == "started":
		return reconciledPending, nil
	case m.KeyStatus == "":
		// No key carries this provider key. Its row was committed before
		// the provider was called, so it was lost (a failover to a standby
		// that had not received it, a restore), and the client's retry,
		// if any, became a new operation with a charge of its own. Seen so
		// for LostAfter, it is refunded; until then it holds the cursor.
		seenFor, err := r.db.SeeUnclaimedCharge(ctx, ch.ID)
		if err != nil {
			return "", fmt.Errorf("note unclaimed charge: %w", err)
		}
		if seconds(seenFor) < r.cfg.LostAfter {
			return reconciledUnknownKey, nil
		}
	}
	result := reconciledOrphan
	if m.KeyStatus == "" {
		result = reconciledLostKey
	}

	// The key is finished, or lost, and no order holds the charge.
	if h := r.cfg.Hooks.BeforeRefund; h != nil {
		h(ctx, ch.ID)
	}
	refund, err := r.provider.Refund(ctx, RefundKey(ch.ID), ch.ID)
	var refused *payment.ProviderError
	if errors.As(err, &refused) {
		// Asking again will not change the answer; an operator must look.
		// The cursor stays before the charge, so it is not forgotten.
		r.log.ErrorContext(ctx, "reconciler: the provider refused to refund a charge that no order holds",
			"charge", ch.ID, "amount", ch.Amount, "currency", ch.Currency, "err", err)
		return reconciledRefundFailed, nil
	}
	if err != nil {
		return "", err
	}
	if h := r.cfg.Hooks.AfterRefund; h != nil {
		h(ctx, ch.ID)
	}
	_, err = r.db.RecordRefund(ctx, db.RecordRefundParams{
		ChargeID: ch.ID, RefundID: refund.ID, CustomerID: m.CustomerID, Key: m.Key,
		Amount: ch.Amount, Currency: ch.Currency,
	})
	if errors.Is(err, database.ErrNotFound) {
		// Another reconciler recorded this refund first.
		return reconciledRefunded, nil
	}
	if err != nil {
		return "", fmt.Errorf("record refund: %w", err)
	}
	r.metrics.Refunds.Inc()
	if result == reconciledLostKey {
		r.log.WarnContext(ctx, "reconciler: refunded a charge whose key was lost (no order holds it, no key claims it)",
			"charge", ch.ID, "refund", refund.ID, "amount", ch.Amount, "currency", ch.Currency, "provider_key", ch.IdempotencyKey)
		return result, nil
	}
	r.log.WarnContext(ctx, "reconciler: refunded a charge that no order holds",
		"charge", ch.ID, "refund", refund.ID, "amount", ch.Amount, "currency", ch.Currency,
		logging.Key(m.Key), "customer_id", m.CustomerID)
	return result, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// RefundKey is the idempotency key of the refund of chargeID: the same for
// every reconciler and every pass, so the provider refunds a charge once.
func RefundKey(chargeID string) string { return "refund_" + chargeID }
