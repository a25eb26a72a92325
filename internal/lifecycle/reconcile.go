package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/tracing"
)

// Provider is the part of the payment provider the reconciler uses.
// *payment.Client satisfies it.
type Provider interface {
	// Intents yields the intents created from a time on, newest first,
	// a page at a time.
	Intents(ctx context.Context, from int64, limit int64) iter.Seq2[payment.Intent, error]
	RetrieveIntent(ctx context.Context, id string) (payment.Intent, error)
	Refund(ctx context.Context, idempotencyKey, intentID string) (payment.Refund, error)
}

// ReconcilerHooks let tests force an interleaving of two reconcilers.
type ReconcilerHooks struct {
	// BeforeRefund runs when a reconciler has found an orphan intent and is
	// about to refund it.
	BeforeRefund func(ctx context.Context, intentID string)
	// AfterRefund runs when the provider has refunded an intent and the
	// refund is not recorded yet.
	AfterRefund func(ctx context.Context, intentID string)
}

// ReconcilerConfig tunes a Reconciler.
type ReconcilerConfig struct {
	// PageSize is how many intents one list call asks for (default 100).
	PageSize int
	// Lag keeps the cursor behind the newest intents (default a minute):
	// an intent is created before it succeeds, so one created just before
	// the cursor can still change; the cursor never passes an intent
	// younger than Lag, so a later pass reads it again. Reading an intent
	// twice is harmless.
	Lag time.Duration
	// LostAfter is how long a succeeded intent must stay unclaimed (no
	// order holds it, no key runs its operation) between two passes before
	// it is taken for a lost operation's and refunded (default a minute;
	// the shop passes its LOCK_TIMEOUT). The key row is committed before
	// the intent is created, so an unclaimed intent has lost its key, to a
	// failover or a restore, or its key expired and was reused; the wait
	// only makes sure the pass did not meet something in flight.
	LostAfter time.Duration
	Hooks     ReconcilerHooks
	// Tracing makes each pass a trace of its own, reconciler.pass, with a
	// span per refund that names the refunded key and links to the trace
	// of its claim; nil makes none.
	Tracing trace.TracerProvider
}

// Reconciler is defence in depth behind the engine and the webhook handler:
// it reads every PaymentIntent the provider holds, from a cursor shared by
// all instances (a creation time), and matches each succeeded one to an
// order and to the key of its operation by the intent's id alone. A
// succeeded intent that no order holds, whose key is finished without one,
// or lost (no key row stores it, and its metadata carries this deployment's
// marker and names one of its customers), is money taken for nothing: the
// reconciler refunds it, records a "refunded" event on the key's audit
// trail (saying so when the operation was lost) and counts it. One that
// carries no marker of this deployment, or names no customer of it, is
// someone else's on the same Stripe account (RecordForeign): recorded and
// never touched. An intent of this deployment that can still succeed is
// watched by id until it is settled (watch.go), and a refund the provider
// refuses for good is parked for an operator (ParkRefusedRefund).
//
// Several instances may reconcile at once without coordination, and beside
// the webhook handler: the refund's idempotency key is derived from the
// intent (RefundKey), so the provider refunds once however many ask, and
// the record of the refund is written once (ON CONFLICT DO NOTHING), so
// only one of them logs and counts it. An intent whose key is still started
// is left alone: its operation is in progress, and the engine or the
// completer will write its order.
type Reconciler struct {
	db       *database.DB
	provider Provider
	cfg      ReconcilerConfig
	metrics  *metrics.Metrics
	log      *slog.Logger
	tracer   trace.Tracer
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
	tp := cfg.Tracing
	if tp == nil {
		tp = tracing.Off().Provider
	}
	return &Reconciler{db: d, provider: provider, cfg: cfg, metrics: m, log: log, tracer: tp.Tracer(tracerName)}
}

// tracerName is the instrumentation scope of the reconciler's spans.
const tracerName = "exactlyonce/internal/lifecycle"

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
	reconciledRefundLater  = "refund_later"
	reconciledForeign      = "foreign"
	reconciledWatched      = "watched"
)

// Reconciled is what one pass did.
type Reconciled struct {
	// Examined counts the intents read; Refunded the orphans this pass
	// refunded and recorded (another instance may have recorded one first).
	Examined, Refunded int
	// Cursor is where the next pass starts: a creation time, Unix seconds.
	Cursor int64
}

// Pass reads the provider's intents created from the cursor on (Stripe's
// list, newest first, a page at a time with starting_after while has_more,
// so a pass holds one page in memory however far behind its cursor is),
// settles each, and moves the cursor to the creation time of the newest
// intent older than the oldest one it cannot settle yet (its key is still
// started, its key is not found yet, its refund is to be asked again, or it
// is younger than Lag), so that a later pass reads that one again; the pass
// itself reads on to the end, so an orphan after it is refunded now. An
// intent of this deployment that can still succeed does not hold the
// cursor: it goes on the watch list, which each pass then reads again by id
// (passWatched) until it is settled. A refund the provider refuses for good
// is parked for an operator (refused_refunds) and does not hold it either.
func (r *Reconciler) Pass(ctx context.Context) (out Reconciled, err error) {
	ctx, span := r.tracer.Start(ctx, "reconciler.pass", trace.WithNewRoot())
	defer func() {
		span.SetAttributes(attribute.Int("exactlyonce.reconciler.examined", out.Examined),
			attribute.Int("exactlyonce.reconciler.refunded", out.Refunded))
		tracing.End(span, err)
	}()
	start, err := r.db.ReconcilerCursor(ctx)
	if err != nil {
		return out, fmt.Errorf("reconciler cursor: %w", err)
	}
	out.Cursor = start
	deployment, err := r.db.DeploymentID(ctx)
	if err != nil {
		return out, fmt.Errorf("reconciler: deployment: %w", err)
	}
	// Newest first: the cursor may go to the newest intent when none is
	// held, else to the newest settled intent older than the oldest held
	// one (since, the first settled intent after the last held one seen).
	var (
		held          bool
		newest, since int64 = -1, -1
	)
	for in, err := range r.provider.Intents(ctx, start, int64(r.cfg.PageSize)) {
		if err != nil {
			return out, fmt.Errorf("reconciler: %w", err)
		}
		result, err := r.reconcile(ctx, in, deployment)
		if err != nil {
			return out, fmt.Errorf("reconcile payment intent %s: %w", in.ID, err)
		}
		r.count(&out, result)
		created := in.Created.Unix()
		if newest < 0 {
			newest = created
		}
		switch {
		case holdsCursor(result) || time.Since(in.Created) < r.cfg.Lag:
			held, since = true, -1
		case held && since < 0:
			// Intents of the same second as this one are read again by
			// the next pass; reading one twice is harmless.
			since = created
		}
	}
	switch {
	case !held && newest >= 0:
		out.Cursor = newest
	case held && since >= 0:
		out.Cursor = since
	}
	if out.Cursor > start {
		if err := r.db.AdvanceReconcilerCursor(ctx, out.Cursor); err != nil {
			return out, fmt.Errorf("reconciler: save cursor: %w", err)
		}
	}
	if err := r.passWatched(ctx, &out, deployment); err != nil {
		return out, err
	}
	return out, nil
}

// count adds one examined intent's result to the pass and the metric.
func (r *Reconciler) count(out *Reconciled, result string) {
	out.Examined++
	if result == reconciledOrphan || result == reconciledLostKey {
		out.Refunded++
	}
	r.metrics.Reconciled.WithLabelValues(result).Inc()
}

// holdsCursor reports whether an intent examined with result must be
// examined again by the next pass: its order may still come, its key may
// still turn up, or its refund is still to be made.
func holdsCursor(result string) bool {
	switch result {
	case reconciledPending, reconciledUnknownKey, reconciledRefundLater:
		return true
	}
	return false
}

// reconcile examines one intent and refunds it if it is an orphan.
// deployment is this database's marker.
func (r *Reconciler) reconcile(ctx context.Context, in payment.Intent, deployment string) (string, error) {
	switch {
	case in.Status == payment.StatusSucceeded:
	case payment.CanStillSucceed(in.Status) && in.Metadata.Deployment == deployment:
		return r.watch(ctx, in)
	default:
		return reconciledNotSucceeded, nil
	}
	m, err := r.db.MatchIntent(ctx, MatchParams(in))
	if err != nil {
		return "", fmt.Errorf("match intent: %w", err)
	}
	switch {
	case m.RefundRecorded:
		return reconciledRefunded, nil
	case m.HasOrder:
		return reconciledMatched, nil
	case m.RefundRefused:
		// Parked for an operator by an earlier pass: asking again would
		// be refused again.
		return reconciledRefundFailed, nil
	case m.KeyStatus == "" && !m.Ours:
		// No key row of this database stores it, and its metadata does
		// not name this deployment and a customer of it: a Payment Link,
		// an invoice, the dashboard, another app or another shop on the
		// same account. Never ours to refund.
		if err := RecordForeign(ctx, r.db, r.metrics, r.log, in, SourceReconciler); err != nil {
			return "", err
		}
		return reconciledForeign, nil
	case m.KeyStatus == "started" && m.KeyParked:
		// The completer parked the key for an operator: no order will
		// come by itself, and holding the cursor for it would hold it for
		// ever. The operator who settles the key decides about its charge
		// (the key's audit trail and this line name it).
		r.log.ErrorContext(ctx, "reconciler: succeeded payment intent of a parked key; left for the operator who settles the key",
			"payment_intent", in.ID, "amount", in.Amount, "currency", in.Currency, logging.Key(in.Metadata.Key),
			"customer_id", in.Metadata.CustomerID)
		return reconciledParked, nil
	case m.KeyStatus == "started":
		return reconciledPending, nil
	case m.KeyStatus == "":
		// No key runs this operation, and the intent carries this
		// deployment's marker and names one of its customers. Its row was
		// committed before the intent was created, so it was lost (a
		// failover to a standby that had not received it, a restore) or
		// the key was reused for a new operation, and the client's retry,
		// if any, was charged by an operation of its own. Seen so for
		// LostAfter, it is refunded; until then it holds the cursor.
		seenFor, err := r.db.SeeUnclaimedCharge(ctx, in.ID)
		if err != nil {
			return "", fmt.Errorf("note unclaimed intent: %w", err)
		}
		if seconds(seenFor) < r.cfg.LostAfter {
			return reconciledUnknownKey, nil
		}
	}
	return r.refund(ctx, in, m.KeyStatus == "")
}

// MatchParams asks MatchIntent about an intent: by its id, with the
// metadata's marker and customer only to tell whether it is this
// deployment's.
func MatchParams(in payment.Intent) db.MatchIntentParams {
	customer, _ := uuid.Parse(in.Metadata.CustomerID) // the nil id, which names no customer, when it is not one
	return db.MatchIntentParams{IntentID: in.ID, DeploymentID: in.Metadata.Deployment, CustomerID: customer}
}

// refund refunds an intent that no order holds, of a key finished without
// one or lost, and records the refund, as a span of the pass (startRefund).
func (r *Reconciler) refund(ctx context.Context, in payment.Intent, lost bool) (_ string, err error) {
	result := reconciledOrphan
	if lost {
		result = reconciledLostKey
	}
	ctx, span := r.startRefund(ctx, in, result)
	defer func() { tracing.End(span, err) }()
	if h := r.cfg.Hooks.BeforeRefund; h != nil {
		h(ctx, in.ID)
	}
	refundID, err := RefundIntent(ctx, r.provider, in)
	var refused *payment.ProviderError
	if errors.As(err, &refused) && refused.Transient() {
		// A refusal that passes: chiefly the refund's key in use by
		// another refund of this intent (the webhook handler's, another
		// reconciler's), or our rate. The next pass asks again; the
		// cursor stays before the intent until then.
		r.log.InfoContext(ctx, "reconciler: the provider asked for the refund of a payment intent to be sent again later",
			"payment_intent", in.ID, "err", err)
		return reconciledRefundLater, nil
	}
	if errors.As(err, &refused) {
		// Asking again will not change the answer; an operator must look.
		// The intent is parked for them (refused_refunds, the admin
		// listener's /payments), so the cursor need not stay before it,
		// which would read it and every later intent on every pass.
		span.SetStatus(codes.Error, err.Error())
		if err := ParkRefusedRefund(ctx, r.db, r.metrics, r.log, in, refused); err != nil {
			return "", err
		}
		return reconciledRefundFailed, nil
	}
	if err != nil {
		return "", err
	}
	if h := r.cfg.Hooks.AfterRefund; h != nil {
		h(ctx, in.ID)
	}
	_, err = r.db.RecordRefund(ctx, RefundRecord(in, refundID, lost))
	if errors.Is(err, database.ErrNotFound) {
		// Another reconciler, or the webhook handler, recorded it first.
		return reconciledRefunded, nil
	}
	if err != nil {
		return "", fmt.Errorf("record refund: %w", err)
	}
	r.metrics.Refunds.Inc()
	if lost {
		r.log.WarnContext(ctx, "reconciler: refunded a lost operation's payment intent (no order holds it, no key runs its operation)",
			"payment_intent", in.ID, "amount", in.Amount, "currency", in.Currency, logging.Key(in.Metadata.Key),
			"customer_id", in.Metadata.CustomerID, "operation_id", in.Metadata.OperationID)
		return result, nil
	}
	r.log.WarnContext(ctx, "reconciler: refunded a payment intent that no order holds",
		"payment_intent", in.ID, "amount", in.Amount, "currency", in.Currency,
		logging.Key(in.Metadata.Key), "customer_id", in.Metadata.CustomerID)
	return result, nil
}

// startRefund starts the span of the refund of a key's intent, named for
// the key (from the intent's metadata) so that the key's traces list the
// pass, and linked to the trace of the key's claim when its audit trail
// still names it.
func (r *Reconciler) startRefund(ctx context.Context, in payment.Intent, result string) (context.Context, trace.Span) {
	ctx, span := r.tracer.Start(ctx, "reconciler.refund", trace.WithAttributes(
		tracing.AttrPaymentIntent.String(in.ID), tracing.AttrOutcome.String(result)))
	customer, err := uuid.Parse(in.Metadata.CustomerID)
	if err != nil || in.Metadata.Key == "" || !span.IsRecording() {
		// No key to name the span for; or a span that keeps nothing
		// (tracing off, the pass not sampled), whose link is not worth
		// a round trip.
		return ctx, span
	}
	span.SetAttributes(tracing.KeyAttributes(in.Metadata.CustomerID, in.Metadata.Key)...)
	tp, err := r.db.ClaimTrace(ctx, db.ClaimTraceParams{CustomerID: customer, Key: in.Metadata.Key})
	if link, ok := tracing.Link(tp); err == nil && ok {
		span.AddLink(link)
	}
	return ctx, span
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// RefundKey is payment.RefundKey: the same key for every reconciler, every
// pass, the webhook handler and the engine, so the provider refunds an
// intent once.
func RefundKey(intentID string) string { return payment.RefundKey(intentID) }

// Refunder is what RefundIntent calls at the provider.
type Refunder interface {
	Refund(ctx context.Context, idempotencyKey, intentID string) (payment.Refund, error)
}

// RefundIntent refunds a succeeded intent that no order holds, under its
// RefundKey, and returns the refund's id to record (RefundRecord): the
// reconciler and the webhook handler refund the same intent once. An
// intent refunded by someone else (an operator, under another key) is
// recorded with that fact.
func RefundIntent(ctx context.Context, provider Refunder, in payment.Intent) (refundID string, err error) {
	refund, err := provider.Refund(ctx, RefundKey(in.ID), in.ID)
	switch {
	case errors.Is(err, payment.ErrAlreadyRefunded):
		return "refunded by another refund", nil
	case err != nil:
		return "", err
	}
	return refund.ID, nil
}

// RefundRecord is the record of the refund of an intent: the customer and
// key from the intent's metadata, so that the "refunded" event lands on the
// key's audit trail, saying whether the operation was lost.
func RefundRecord(in payment.Intent, refundID string, lost bool) db.RecordRefundParams {
	customer, _ := uuid.Parse(in.Metadata.CustomerID) // the nil id when the metadata holds none
	return db.RecordRefundParams{
		ChargeID: in.ID, RefundID: refundID, CustomerID: customer, Key: in.Metadata.Key,
		Amount: in.Amount, Currency: in.Currency, LostOperation: lost,
	}
}
