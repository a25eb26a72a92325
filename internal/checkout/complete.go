package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
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
// back. It is the kit's completer (idem.Completer) with the order flow as
// its Settler: the kit takes each key over exactly as a retry would, with a
// new lock token, and the Settler cancels the operation at the provider by
// its derived key and finishes the key the way the attempt would have: the
// order for the charge the cancel returned, the decline for a declined one,
// and payment-not-completed when the cancel found none. Every write goes
// through the engine's guarded finish, so a retry racing the completer for
// the same key still yields one order and one charge, and so do completers
// on several instances, which never wait for each other (SKIP LOCKED).
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
// order; idem.Poison) is parked by the kit: it stays started, is no longer
// taken over, and is recorded as "parked" in the audit trail, the metrics
// and the lab for an operator to look at. An outage of the provider or the
// database parks nothing.
type Completer struct {
	e        *Engine
	canceler Canceler
	kit      *idem.Completer
}

// NewCompleter returns a completer that finishes keys with e.
func NewCompleter(e *Engine, canceler Canceler, cfg CompleterConfig) *Completer {
	if cfg.Batch <= 0 {
		cfg.Batch = 10
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxSettleAttempts
	}
	p := &Completer{e: e, canceler: canceler}
	p.kit = &idem.Completer{
		Store: e.keys, Settler: idem.SettlerFunc(p.settleKey), Grace: cfg.Grace,
		Max: cfg.Batch, MaxAttempts: cfg.MaxAttempts, Observe: p.observe,
	}
	return p
}

// Pass takes over and settles up to the batch size of stuck keys, one at a
// time, so that each key's lock is as fresh as its work. It returns how many
// keys it took over. A key it could not settle (the provider is down) keeps
// the completer's lock until it expires, and a later pass or a retry tries
// again; only a database failure ends the pass early.
func (p *Completer) Pass(ctx context.Context) (int, error) { return p.kit.Pass(ctx) }

// settleKey is the Settler: it settles one key the kit took over and names
// the outcome for observe. A failure retrying cannot cure (an unreadable
// request, the provider refusing the cancel, a charge that does not match
// the order) is marked idem.Poison, so the kit parks the key in the end.
func (p *Completer) settleKey(ctx context.Context, l *idem.Lock) (string, error) {
	customer, err := uuid.Parse(l.Scope)
	if err != nil {
		return "error", idem.Poison(fmt.Errorf("scope %q is not a customer id: %w", l.Scope, err))
	}
	c, err := claimOf(customer, l)
	if err == nil && c.resumed == nil {
		err = errors.New("the key holds no order to settle")
	}
	if err != nil {
		return "error", idem.Poison(err)
	}
	return p.settle(ctx, Attempt{CustomerID: customer, Key: l.Key}, c, *c.resumed)
}

// observe records what became of a key the kit handed over: the audit
// event of a parking, the metrics and the log line.
func (p *Completer) observe(ctx context.Context, s idem.Settled) {
	e := p.e
	outcome, err := s.Outcome, s.Err
	log := e.log.With(logging.Key(s.Lock.Key), "customer_id", s.Lock.Scope, "outcome", outcome)
	if s.Parked {
		outcome = "parked"
		if customer, perr := uuid.Parse(s.Lock.Scope); perr == nil {
			e.recordEvent(ctx, customer, s.Lock.Key, "parked", map[string]any{"attempts": s.Attempt, "error": err.Error()})
		}
	}
	e.metrics.Recoveries.WithLabelValues(outcome).Inc()
	switch {
	case errors.Is(err, ErrLockLost):
		log.InfoContext(ctx, "completer: a retry settled the key first")
	case outcome == "parked":
		log.ErrorContext(ctx, "completer: poison key parked after repeated failures; it needs an operator",
			"attempts", s.Attempt, "err", err)
	case err != nil:
		log.WarnContext(ctx, "completer: key left for later", "attempt", s.Attempt, "err", err)
	default:
		log.InfoContext(ctx, "completer: key recovered")
	}
}

// settle finishes a key the completer holds, and names the outcome.
func (p *Completer) settle(ctx context.Context, a Attempt, c claim, priced catalog.Priced) (string, error) {
	e := p.e
	claimed := Claimed{CustomerID: a.CustomerID, Key: a.Key, TakenOver: true, ByCompleter: true}
	if h := e.cfg.Hooks.AfterClaim; h != nil {
		h(ctx, claimed)
	}

	var ch payment.Charge
	err := e.withLease(ctx, c, claimed, func(ctx context.Context) error {
		if h := e.cfg.Hooks.BeforeCharge; h != nil {
			h(ctx, claimed)
		}
		began := time.Now()
		var err error
		ch, err = p.canceler.Cancel(ctx, c.providerKey)
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
		if errors.As(err, &refused) && !refused.Transient() {
			// The provider refuses the request itself: asking again
			// will not change its answer. A refusal that passes (our
			// rate, a key in use, a rotated secret) is an outage.
			err = idem.Poison(err)
		}
		return "error", err
	case !noCharge && (ch.Amount != priced.Amount || ch.Currency != priced.Currency):
		// The provider key is derived from this operation alone, so this
		// is a bug: writing an order for an amount nobody was charged
		// would hide it.
		return "error", idem.Poison(fmt.Errorf("charge %s is for %d %s, the order for %d %s", ch.ID, ch.Amount, ch.Currency, priced.Amount, priced.Currency))
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

// recordEvent appends a parking to the key's audit trail, with the error
// that parked it, which only the completer knows. The trail is for people:
// a failure to write it is logged, not returned.
func (e *Engine) recordEvent(ctx context.Context, customer uuid.UUID, key, event string, detail map[string]any) {
	raw, err := json.Marshal(detail)
	if err == nil {
		err = e.db.RecordKeyEvent(ctx, db.RecordKeyEventParams{CustomerID: customer, Key: key, Event: event, Detail: raw})
	}
	if err != nil {
		e.log.WarnContext(ctx, "record key event", "event", event, "err", err)
	}
}
