// Package refund gives money back for a paid order exactly once, however
// often it is asked: a customer's cancel (the whole of what is left, within
// a window), or an operator's refund of part of an order. Each runs under an
// idempotency key of its own in the kit's store (kind KeyKind), through the
// kit's claim, kept lease and fenced finish, the way an order does:
//
//  1. claim the key (idem.Store.ClaimOrAwait): a replay, a key in
//     progress, a mismatch, or this attempt's lock;
//  2. reserve (reserve.go): under the order's row lock, judge the ask (the
//     order is this customer's, not cancelled, in its window, with enough
//     left) and write the refund's row, pending, in one transaction that
//     also holds the key's row, so that no takeover or release lands
//     between; an attempt that took the key over finds the row and carries
//     on with it;
//  3. refund at the provider under a key derived from the refund's id (the
//     key's operation id), so every attempt, and the completer, asks for
//     one refund;
//  4. finish, fenced (carry.go): the row marked refunded (or failed, when
//     the provider refuses for good), a cancel's order cancelled and its
//     stock given back, the mail and the loyalty reversal enqueued, and the
//     answer stored, in one transaction (idem.Lock.FinishTx).
//
// A refund whose provider answer was lost leaves its key started, its lease
// ended (idem.Lock.Expire): the client's retry takes it over and asks the
// provider again under the same key; if no retry comes, the completer
// (Settler) does.
package refund

import (
	"context"
	"time"

	"github.com/google/uuid"

	"exactlyonce/idem"
	"exactlyonce/internal/database"
	"exactlyonce/internal/payment"
)

// KeyKind is the kind of refund keys in the kit's table: the refund
// completer and sweeper take only these.
const KeyKind = "refund"

// The kinds of refund.
const (
	// KindCancel is a customer's cancel: what is left of the order, within
	// Config.CancelWindow, and the order cancelled with its stock back.
	KindCancel = "cancel"
	// KindRefund is an operator's refund of an amount, at any time; the
	// order stays as it is.
	KindRefund = "refund"
)

// OperatorScope is the scope of the operator's refund keys.
const OperatorScope = "operator"

// DefaultCancelWindow is how long after it is placed a customer may cancel
// an order: before it would be packed.
const DefaultCancelWindow = time.Hour

// Payments is the provider call a refund makes; *payment.Client has it.
type Payments interface {
	RefundAmount(ctx context.Context, req payment.RefundRequest) (payment.Refund, error)
}

// Ask is what a refund asks for.
type Ask struct {
	CustomerID uuid.UUID
	OrderID    uuid.UUID
	// Kind is KindCancel or KindRefund.
	Kind string
	// Amount is a KindRefund's, in minor units; a cancel takes what is left.
	Amount int64
	// Reason is the operator's note, kept with the refund.
	Reason string
	// Channel names whose answer is stored (Service's Answers): the API's,
	// the shop's pages', the operator's.
	Channel string
}

// Refund is a refund as its answer tells of it.
type Refund struct {
	ID         uuid.UUID
	CustomerID uuid.UUID
	OrderID    uuid.UUID
	Kind       string
	Amount     int64
	Currency   string
	// State is "refunded", or "failed" when the provider refused it.
	State string
	// ProviderRefundID is the provider's refund (refunded only).
	ProviderRefundID string
	// Failure is why the provider refused it (failed only).
	Failure string
}

// Answer makes the answer stored under a refund's key, for one channel.
type Answer func(Refund) idem.Response

// Config tunes a Service.
type Config struct {
	// Lease is how long an attempt holds a key without renewing it.
	Lease time.Duration
	// CancelWindow: see DefaultCancelWindow.
	CancelWindow time.Duration
	// Retention is how long finished keys are kept.
	Retention time.Duration
	// Hooks let tests force an interleaving of concurrent refunds.
	Hooks Hooks
}

// Hooks are test signals; nil hooks are skipped.
type Hooks struct {
	// AfterReserve runs once the refund's row is reserved (or found, by an
	// attempt that took the key over), before the provider is asked.
	AfterReserve func(ctx context.Context, r Refund)
	// BeforeFinish runs once the provider answered, before the finish.
	BeforeFinish func(ctx context.Context, r Refund)
}

// Service runs refunds. It is safe for concurrent use.
type Service struct {
	db       *database.DB
	keys     *idem.Store
	payments Payments
	cfg      Config
	answers  map[string]Answer
}

// New returns a Service whose stored answers are made by answers, one per
// channel (Ask.Channel).
func New(d *database.DB, payments Payments, cfg Config, answers map[string]Answer) *Service {
	if cfg.CancelWindow <= 0 {
		cfg.CancelWindow = DefaultCancelWindow
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	return &Service{db: d, payments: payments, cfg: cfg, answers: answers,
		keys: idem.NewStore(d.Pool, idem.Options{Kind: KeyKind, Lease: cfg.Lease, Retention: cfg.Retention})}
}

// Keys is the kit's store of refund keys: its completer and sweeper, and the
// write limits, use it.
func (s *Service) Keys() *idem.Store { return s.keys }

// CancelWindow is how long after it is placed an order may be cancelled.
func (s *Service) CancelWindow() time.Duration { return s.cfg.CancelWindow }

// ProviderKey is the provider's idempotency key for the refund id: derived
// from the key's operation id, the same for every attempt at the refund.
func ProviderKey(id uuid.UUID) string { return "order-refund_" + id.String() }
