package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/payment"
)

// Canceler gives an operation a final verdict at the provider: the charge
// made with its idempotency key, or payment.ErrCanceled when there is none,
// after which none can be made. *payment.Client satisfies it.
//
// The fake provider cancels by idempotency key. Stripe cannot: it finds
// objects only by their own ids. Against Stripe the operation would be a
// PaymentIntent, created (idempotently) before it is confirmed, whose id the
// claim stores in the key row; this interface would then take that id.
type Canceler interface {
	Cancel(ctx context.Context, idempotencyKey string) (payment.Charge, error)
}

// CompleterConfig tunes a Completer.
type CompleterConfig struct {
	// Grace is how long after its creation a key is left to its client's
	// retries before the completer may take it over. A retry resumes the
	// operation and can still charge; the completer only cancels, and
	// closes a key with no charge for good.
	Grace time.Duration
	// Batch bounds the keys one pass takes over.
	Batch int
	// MaxAttempts is how many times the completer takes a key over and
	// fails to settle it before it parks the key (DefaultMaxSettleAttempts
	// when zero).
	MaxAttempts int
}

// DefaultMaxSettleAttempts is how many failed settlements park a key.
const DefaultMaxSettleAttempts = 5

// Completer finishes operations whose attempt died or stalled: keys left
// started with an expired lock (the process stopped after charging, the
// provider timed out, the process was paused) whose client has not come
// back. It takes each over exactly as a retry would, with a new lock token,
// cancels the operation at the provider by its derived key, and finishes the
// key the way the attempt would have: the order for the charge the cancel
// returned, the decline for a declined one, and payment-not-completed when
// the cancel found none. Every write goes through the engine's guarded
// finish, so a retry racing the completer for the same key still yields one
// order and one charge, and so do completers on several instances, which
// never wait for each other (SKIP LOCKED).
//
// It never concludes "no charge" from a look-up: an attempt that stalled
// after sending its create-charge call (a paused process, a slow network, a
// provider that processes a request after the client timed out) could still
// charge after the look-up. The cancel is atomic at the provider: it either
// returns the charge or closes the key, so that the late call charges
// nothing.
//
// A key it has taken over MaxAttempts times whose settling then fails for a
// reason retrying cannot cure (a poison key: its stored request is
// unreadable, the provider refuses the cancel, the charge does not match the
// order) is parked: it stays started, is no longer taken over, and is
// recorded as "parked" in the audit trail, the metrics and the lab for an
// operator to look at. An outage of the provider or the database parks
// nothing.
type Completer struct {
	e        *Engine
	canceler Canceler
	cfg      CompleterConfig
}

// NewCompleter returns a completer that finishes keys with e.
func NewCompleter(e *Engine, canceler Canceler, cfg CompleterConfig) *Completer {
	if cfg.Batch <= 0 {
		cfg.Batch = 10
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxSettleAttempts
	}
	return &Completer{e: e, canceler: canceler, cfg: cfg}
}

// Pass takes over and settles up to the batch size of stuck keys, one at a
// time, so that each key's lock is as fresh as its work. It returns how many
// keys it took over. A key it could not settle (the provider is down) keeps
// the completer's lock until it expires, and a later pass or a retry tries
// again; only a database failure ends the pass early.
func (p *Completer) Pass(ctx context.Context) (int, error) {
	n := 0
	for n < p.cfg.Batch {
		took, err := p.recoverOne(ctx)
		if err != nil {
			return n, err
		}
		if !took {
			break
		}
		n++
	}
	return n, nil
}

// recoverOne takes over one stuck key and settles it. It reports false when
// there was no key to take.
func (p *Completer) recoverOne(ctx context.Context) (bool, error) {
	e := p.e
	token := uuid.New()
	lockedAt := time.Now()
	row, err := e.db.TakeOverStuckKey(ctx, db.TakeOverStuckKeyParams{
		Grace: p.cfg.Grace, LockToken: token, LockFor: e.cfg.LockTimeout,
	})
	if errors.Is(err, database.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("take over stuck key: %w", err)
	}
	a := Attempt{CustomerID: row.CustomerID, Key: row.Key}
	c := claim{token: token, takenOver: true, byCompleter: true, operation: row.OperationID, lockedAt: lockedAt}
	outcome, err := p.settle(ctx, a, c, row)
	log := e.log.With(logging.Key(a.Key), "customer_id", a.CustomerID, "outcome", outcome)
	var poison *poisonError
	if errors.As(err, &poison) && int(row.SettleAttempts) >= p.cfg.MaxAttempts {
		if p.park(ctx, a, c, err) {
			outcome = "parked"
		}
	}
	e.metrics.Recoveries.WithLabelValues(outcome).Inc()
	switch {
	case errors.Is(err, ErrLockLost):
		log.InfoContext(ctx, "completer: a retry settled the key first")
	case outcome == "parked":
		log.ErrorContext(ctx, "completer: poison key parked after repeated failures; it needs an operator",
			"attempts", row.SettleAttempts, "err", err)
	case err != nil:
		log.WarnContext(ctx, "completer: key left for later", "attempt", row.SettleAttempts, "err", err)
	default:
		log.InfoContext(ctx, "completer: key recovered")
	}
	return true, nil
}

// poisonError is a failure to settle a key that retrying cannot cure: its
// stored request is unreadable, the provider refuses the request, the charge
// does not match the order. Only these count towards parking a key; a
// provider or database that is down for a while parks nothing.
type poisonError struct{ err error }

func (e *poisonError) Error() string { return e.err.Error() }
func (e *poisonError) Unwrap() error { return e.err }

// park marks a key the completer holds as parked, with the error that made
// it give up, and reports whether it did (a retry may have taken it over).
func (p *Completer) park(ctx context.Context, a Attempt, c claim, cause error) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.e.cfg.FinishTimeout)
	defer cancel()
	reason := "unknown"
	if cause != nil {
		reason = cause.Error()
	}
	_, err := p.e.db.ParkKey(ctx, db.ParkKeyParams{CustomerID: a.CustomerID, Key: a.Key, LockToken: c.token, Reason: reason})
	if err != nil {
		p.e.log.WarnContext(ctx, "completer: park key", logging.Key(a.Key), "err", err)
		return false
	}
	return true
}

// settle finishes a key the completer holds, and names the outcome.
func (p *Completer) settle(ctx context.Context, a Attempt, c claim, row db.TakeOverStuckKeyRow) (string, error) {
	e := p.e
	priced, err := decodeRequest(row.Request)
	if err != nil {
		return "error", &poisonError{err}
	}
	claimed := Claimed{CustomerID: a.CustomerID, Key: a.Key, TakenOver: true, ByCompleter: true}
	if h := e.cfg.Hooks.AfterClaim; h != nil {
		h(ctx, claimed)
	}

	var ch payment.Charge
	err = e.withLease(ctx, a.CustomerID, a.Key, c, e.cfg.LockTimeout, claimed, func(ctx context.Context) error {
		if h := e.cfg.Hooks.BeforeCharge; h != nil {
			h(ctx, claimed)
		}
		began := time.Now()
		var err error
		ch, err = p.canceler.Cancel(ctx, ProviderKey(a.CustomerID, a.Key, c.operation))
		e.metrics.ObserveProvider("cancel", providerResult(ctx, ch, err), began)
		return err
	})
	noCharge := errors.Is(err, payment.ErrCanceled)
	switch {
	case errors.Is(err, ErrLockLost):
		return "lost", err
	case err != nil && !noCharge:
		err = fmt.Errorf("cancel at the provider: %w", err)
		var refused *payment.ProviderError
		if errors.As(err, &refused) {
			// The provider refuses the request itself: asking again
			// will not change its answer.
			err = &poisonError{err}
		}
		return "error", err
	case !noCharge && (ch.Amount != priced.Amount || ch.Currency != priced.Currency):
		// The provider key is derived from this operation alone, so this
		// is a bug: writing an order for an amount nobody was charged
		// would hide it.
		return "error", &poisonError{fmt.Errorf("charge %s is for %d %s, the order for %d %s", ch.ID, ch.Amount, ch.Currency, priced.Amount, priced.Currency)}
	}

	if h := e.cfg.Hooks.BeforeFinish; h != nil {
		h(ctx, claimed)
	}
	// Having learned the outcome, write it even if the pass is being
	// stopped: it is one short statement, and it spares the next instance
	// asking the provider again.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.FinishTimeout)
	defer cancel()
	var outcome string
	switch {
	case noCharge:
		outcome = outcomeNotCompleted
		_, err = e.finishNotCompleted(ctx, a, c)
	case ch.Status == payment.StatusDeclined:
		outcome = outcomeDeclined
		_, err = e.finishDeclined(ctx, a, c, &payment.DeclinedError{ChargeID: ch.ID, Message: "The card was declined."})
	default:
		outcome = outcomeCharged
		_, err = e.finishOrder(ctx, a, c, priced, ch)
	}
	switch {
	case errors.Is(err, ErrLockLost):
		return "lost", err
	case err != nil:
		return "error", err
	}
	return outcome, nil
}
