package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/db"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/tracing"
)

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
// new lock token, and the Settler settles the operation's PaymentIntent and
// finishes the key the way the attempt would have (see settle): the order
// for an intent that succeeded, the decline for a declined one, and
// payment-not-completed for one canceled or never confirmed. Every write
// goes through the engine's guarded finish, so a retry racing the completer
// for the same key still yields one order and one charge, and so do
// completers on several instances, which never wait for each other (SKIP
// LOCKED).
//
// It never concludes "no charge" from a look-up: an attempt that stalled
// after sending its confirm (a paused process, a slow network, a provider
// that processes a request after the client timed out) could still charge
// after the look-up. It cancels the intent instead: Stripe decides a
// confirm and a cancel of one intent one at a time, so the cancel either
// finds the intent succeeded or makes every later confirm fail. And it
// never sends a call that charges: an intent whose id was never stored was
// never confirmed (the confirm comes only after the fenced store), so it is
// settled as not completed without a confirm.
//
// A key it has taken over MaxAttempts times whose settling then fails for a
// reason retrying cannot cure (a poison key: its stored request is
// unreadable, the provider refuses the cancel; idem.Poison) is parked by the kit: it stays started, is no longer
// taken over, and is recorded as "parked" in the audit trail, the metrics
// and the lab for an operator to look at. An outage of the provider or the
// database parks nothing.
type Completer struct {
	e        *Engine
	payments Payments
	kit      *idem.Completer
}

// NewCompleter returns a completer that finishes keys with e, settling
// their intents through payments (the engine's, but for tests of a
// provider that fails).
func NewCompleter(e *Engine, payments Payments, cfg CompleterConfig) *Completer {
	if cfg.Batch <= 0 {
		cfg.Batch = 10
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxSettleAttempts
	}
	p := &Completer{e: e, payments: payments}
	p.kit = &idem.Completer{
		Store: e.keys, Settler: idem.SettlerFunc(p.settleKey), Grace: cfg.Grace,
		Max: cfg.Batch, MaxAttempts: cfg.MaxAttempts, Observe: p.observe, Around: p.traced,
	}
	return p
}

// traced makes each key's turn a trace of its own, completer.settle,
// named for the key and linked to the trace of its claim (the request
// that claimed it), so that the key's traces show what became of the
// request's operation. A pass that finds no stuck key makes no trace.
func (p *Completer) traced(ctx context.Context, l *idem.Lock, turn func(context.Context)) {
	ctx, span := p.e.tracer.Start(ctx, spanSettle, trace.WithNewRoot(),
		trace.WithAttributes(tracing.KeyAttributes(l.Scope, l.Key)...))
	defer span.End()
	turn(ctx)
}

// Pass takes over and settles up to the batch size of stuck keys, one at a
// time, so that each key's lock is as fresh as its work. It returns how many
// keys it took over. A key it could not settle (the provider is down) keeps
// the completer's lock until it expires, and a later pass or a retry tries
// again; only a database failure ends the pass early.
func (p *Completer) Pass(ctx context.Context) (int, error) { return p.kit.Pass(ctx) }

// SettleKey settles the customer's key now, as a pass would when its turn
// came, for a caller that has learned its outcome may be known: the shopper
// back from their bank's 3-D Secure page, or the provider's webhook about
// its intent. It returns the outcome (charged, declined, not_completed,
// pending while the shopper may still be at their bank, lost when a retry
// settled it first); idem.ErrInProgress when an attempt holds the key, and
// idem.ErrNotFound when it is finished already or unknown. The key's stored
// answer, once there is one, is what to show (Engine.State).
func (p *Completer) SettleKey(ctx context.Context, customer uuid.UUID, key string) (string, error) {
	s, err := p.kit.SettleKey(ctx, customer.String(), key)
	if err != nil {
		return "", err
	}
	return s.Outcome, s.Err
}

// settleKey is the Settler: it settles one key the kit took over and names
// the outcome for observe. A failure retrying cannot cure (an unreadable
// request, the provider refusing the cancel) is marked idem.Poison, so the
// kit parks the key in the end.
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
	span := trace.SpanFromContext(ctx) // the key's turn (traced)
	span.SetAttributes(attrOutcome.String(outcome), attrAttempt.Int(s.Attempt))
	if err != nil && !errors.Is(err, ErrLockLost) {
		span.SetStatus(codes.Error, err.Error())
	}
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

// settle finishes a key the completer holds, and names the outcome. With
// the intent's id stored, it retrieves the intent: succeeded → the order,
// if it charged the order's amount and currency (otherwise it is refunded
// and the key not completed, finishMismatch); canceled → not completed (or
// the decline it had); processing → left for a later pass, until it
// succeeds or fails; any state that can still be confirmed (requires_action
// among them) → canceled (idempotently), and then whatever the cancel
// found. Without a stored id,
// while the key is younger than the provider's key window, it sends the
// operation's create again (the same key and parameters, replayed) to learn
// the intent's id and cancel it, tidily: nothing would confirm it, but
// Stripe never cancels it by itself. After the window it makes no call: the
// create would make a new intent, and the old one, never confirmed, stays
// requires_payment_method in the dashboard. Either way the key is not
// completed.
func (p *Completer) settle(ctx context.Context, a Attempt, c claim, priced catalog.Priced) (string, error) {
	e := p.e
	claimed := Claimed{CustomerID: a.CustomerID, Key: a.Key, TakenOver: true, ByCompleter: true}
	if h := e.cfg.Hooks.AfterClaim; h != nil {
		h(ctx, claimed)
	}
	if err := e.loadIntent(ctx, a.CustomerID, &c); err != nil {
		return "error", err
	}
	if link, ok := tracing.Link(c.claimTrace); ok {
		trace.SpanFromContext(ctx).AddLink(link)
	}

	var in payment.Intent
	err := e.withLease(ctx, c, claimed, func(ctx context.Context) error {
		if h := e.cfg.Hooks.BeforeCharge; h != nil {
			h(ctx, claimed)
		}
		var err error
		in, err = p.settleIntent(ctx, a, &c, priced)
		return err
	})
	switch {
	case errors.Is(err, ErrLockLost):
		return "lost", err
	case errors.Is(err, errAwaitingAuthentication):
		// The shopper is at their bank, as good as asking: counted as an
		// ask, so that the completer looks again only a grace later, and
		// handed back at once, so that their return or the webhook, which
		// may come any moment now, does not find the key held by a pass
		// that had nothing to do.
		if err := e.keys.Ask(ctx, a.CustomerID.String(), a.Key); err != nil {
			e.log.WarnContext(ctx, "completer: record the shopper at the bank as asking", logging.Key(a.Key), "err", err)
		}
		e.handBack(ctx, a, c)
		return "pending", err
	case errors.Is(err, errProcessing):
		return "pending", err
	case err != nil:
		err = fmt.Errorf("settle at the provider: %w", err)
		var refused *payment.ProviderError
		if errors.As(err, &refused) && !refused.Transient() {
			// The provider refuses the request itself: asking again
			// will not change its answer. A refusal that passes (our
			// rate, a key in use, a rotated secret) is an outage.
			err = idem.Poison(err)
		}
		return "error", err
	}

	if h := e.cfg.Hooks.BeforeFinish; h != nil {
		h(ctx, claimed)
	}
	// Having learned the outcome, write it even if the pass is being
	// stopped: it is one short statement, and it spares the next instance
	// asking the provider again.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.FinishTimeout)
	defer cancel()
	// The same rule as the request's (chargeAndFinish): only an intent
	// that succeeded for the order's amount and currency is an order.
	var outcome string
	switch {
	case in.Status == payment.StatusSucceeded && sameMoney(in, priced):
		outcome = outcomeCharged
		_, err = e.finishOrder(ctx, a, c, priced, in)
	case in.Status == payment.StatusSucceeded:
		outcome = outcomeNotCompleted
		_, err = e.finishMismatch(ctx, p.payments, a, c, priced, in)
	case in.Status != payment.StatusCanceled:
		// settleIntent returns a final intent or an error: anything else
		// is a bug, and never an order.
		return "error", fmt.Errorf("payment intent %s is %s, neither succeeded nor canceled", in.ID, in.Status)
	case in.Declined != "":
		outcome = outcomeDeclined
		_, err = e.finishDeclined(ctx, a, c, &payment.DeclinedError{IntentID: in.ID, Message: in.Declined, Code: in.DeclineCode})
	case c.awaited:
		// The shopper was sent to their bank and did not authenticate
		// in time: the verdict on this payment itself, with its intent,
		// not on a request that went quiet.
		outcome = outcomeNotCompleted
		_, err = e.finishNotCompleted(ctx, a, c, abandonedDetail, in.ID)
	default:
		outcome = outcomeNotCompleted
		_, err = e.finishNotCompleted(ctx, a, c, "", "")
	}
	switch {
	case errors.Is(err, ErrLockLost):
		return "lost", err
	case err != nil:
		return "error", err
	}
	return outcome, nil
}

// errProcessing leaves a key whose intent is processing for a later pass.
var errProcessing = errors.New("payment intent is processing")

// errAwaitingAuthentication leaves a key whose shopper may still be
// authenticating the payment with their bank for a later pass.
var errAwaitingAuthentication = errors.New("payment intent waits for the shopper's authentication")

// settleIntent brings the operation's intent to a final state at the
// provider and returns it (see settle); an intent never confirmed comes
// back canceled, or with no id when none can be learned.
func (p *Completer) settleIntent(ctx context.Context, a Attempt, c *claim, priced catalog.Priced) (payment.Intent, error) {
	e := p.e
	if c.intentID == "" {
		if c.age >= e.cfg.ProviderKeyWindow {
			// No call: the provider has forgotten the create's key.
			return payment.Intent{Status: payment.StatusCanceled}, nil
		}
		in, err := e.createIntent(ctx, p.payments, a, c, priced)
		if err != nil {
			return payment.Intent{}, err
		}
		c.intentID = in.ID
	} else {
		in, err := e.callProvider(ctx, "retrieve", func(ctx context.Context) (payment.Intent, error) {
			return p.payments.RetrieveIntent(ctx, c.intentID)
		})
		switch {
		case err != nil:
			return payment.Intent{}, err
		case in.Status == payment.StatusSucceeded, in.Status == payment.StatusCanceled:
			return in, nil
		case in.Status == payment.StatusProcessing:
			return payment.Intent{}, errProcessing
		case in.Status == payment.StatusRequiresAction && c.awaited && c.awaiting < e.cfg.AuthenticationWindow:
			// The shopper may still be at their bank: left until they
			// come back, the webhook comes, or the window has passed.
			return payment.Intent{}, errAwaitingAuthentication
		}
	}
	in, err := e.callProvider(ctx, "cancel", func(ctx context.Context) (payment.Intent, error) {
		return p.payments.CancelIntent(ctx, c.intentID, cancelKey(c.providerKey))
	})
	if err == nil && in.Status == payment.StatusProcessing {
		// It went processing since the retrieve, and refused the cancel.
		return payment.Intent{}, errProcessing
	}
	return in, err
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
