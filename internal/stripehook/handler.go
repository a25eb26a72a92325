// Package stripehook receives Stripe's webhooks at POST /webhooks/stripe.
// It verifies each delivery's Stripe-Signature with the SDK
// (webhook.ConstructEventWithOptions, STRIPE_WEBHOOK_SECRET, a five-minute
// tolerance, and an event of the SDK's API release, see
// TestEventsOfAnotherAPIReleaseAreRefused): a bad or stale signature, or an
// event of another release, is a 400 and nothing is stored. It
// handles payment_intent.succeeded, payment_intent.payment_failed,
// payment_intent.canceled and charge.refunded through an inbox: each
// event's effect and its id are written in one transaction (stripe_events,
// the id unique), so an event Stripe delivers again, or out of order,
// changes nothing twice.
//
// The one effect beyond the record is a refund: a succeeded PaymentIntent
// that no order holds, whose key finished without an order (or whose
// operation was lost: no key row stores its id, and its metadata carries
// this deployment's marker and names one of its customers), is refunded
// at once, under the refund key the reconciler uses (lifecycle.RefundKey),
// so the two refund an intent once. The intent is matched to its order and
// key by its id, never by the event's metadata; one this database did not
// make is recorded as foreign and never refunded. An intent whose key is
// still started is only recorded, and watched by the reconciler: the
// attempt, or the completer, writes its order. The reconciler stays as the
// safety net for webhooks that never arrive. Without a secret every
// delivery is refused: the SDK would accept the empty key.
package stripehook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/lifecycle"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/tracing"
	"exactlyonce/internal/web"
)

// Tolerance is how old a signature may be: Stripe's default, which stops
// a captured delivery from being replayed later.
const Tolerance = 5 * time.Minute

// maxBodyBytes bounds a delivery; Stripe's events are a few kilobytes.
const maxBodyBytes = 256 << 10

// Handler receives the webhooks. It is safe for concurrent use.
type Handler struct {
	db       *database.DB
	refunder lifecycle.Refunder
	secret   string
	metrics  *metrics.Metrics
	log      *slog.Logger
	// Settle, when set, settles an order's key now by its payment as the
	// provider has it (checkout.Completer.SettleKey): a payment whose
	// shopper went to their bank to authenticate it (3-D Secure) is settled
	// by its webhook as soon as it succeeds or fails, whether or not the
	// shopper comes back to the shop.
	Settle func(ctx context.Context, customer uuid.UUID, key string) (string, error)
}

// New returns a handler that verifies deliveries with secret and refunds
// through refunder.
func New(d *database.DB, refunder lifecycle.Refunder, secret string, m *metrics.Metrics, log *slog.Logger) *Handler {
	if m == nil {
		m = metrics.New()
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{db: d, refunder: refunder, secret: secret, metrics: m, log: log}
}

// Register mounts POST /webhooks/stripe on e.
func (h *Handler) Register(e *echo.Echo) {
	e.POST("/webhooks/stripe", h.receive)
}

// receive is POST /webhooks/stripe. Its answers are for Stripe, which
// delivers again after anything but a 2xx: 200 with the event's effect,
// a duplicate included. What it cannot handle goes to the shop's one
// error handler, as every handler's refusals and failures do, so the
// statuses and the logs are the shop's: a delivery that is not Stripe's
// is a 400 (delivering it again will not make it so, and nothing is
// stored), an outage of the database a 503 with Retry-After, a provider
// out of reach for a refund a 503 too, and so is one that refuses it for a
// reason that passes (payment.ProviderError.Transient: chiefly the refund's
// key in use by another refund of the same intent, from a duplicate
// delivery at another shop or the reconciler), a Stripe that hung up a
// 499, and anything else a 500, a fault of ours.
func (h *Handler) receive(c echo.Context) error {
	r := c.Request()
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, maxBodyBytes))
	if err != nil {
		return web.Fail(problem.InvalidRequest, "the body could not be read whole")
	}
	if h.secret == "" {
		// The SDK would verify against an empty key, which anyone can
		// sign with. The configuration refuses to start so (config:
		// STRIPE_WEBHOOK_SECRET); this is the last line.
		return errors.New("stripe webhook: no webhook secret configured: every delivery is refused")
	}
	ev, err := webhook.ConstructEventWithOptions(body, r.Header.Get("Stripe-Signature"), h.secret,
		webhook.ConstructEventOptions{Tolerance: Tolerance})
	if err != nil {
		// The SDK's error says which: the signature, its age, or an
		// api_version of another release than the SDK's (a webhook
		// endpoint left on the old release after an upgrade of stripe-go).
		return web.Fail(problem.InvalidRequest, "delivery refused (bad or stale Stripe-Signature, or another API release): "+err.Error())
	}
	effect, err := h.Handle(r.Context(), ev)
	var (
		unavailable *payment.UnavailableError
		refused     *payment.ProviderError
	)
	switch {
	case errors.As(err, &unavailable), errors.As(err, &refused) && refused.Transient():
		return &web.Failure{Kind: problem.ProviderUnavailable, RetryAfter: providerRetryAfter,
			Detail: fmt.Sprintf("stripe event %s (%s): %v", ev.ID, ev.Type, err)}
	case err != nil:
		return fmt.Errorf("stripe event %s (%s): %w", ev.ID, ev.Type, err)
	}
	h.log.InfoContext(r.Context(), "stripe webhook", "event", ev.ID, "type", ev.Type, "effect", effect)
	return c.String(http.StatusOK, effect+"\n")
}

// providerRetryAfter is what Stripe is told to wait when a refund found the
// provider out of reach.
const providerRetryAfter = 2 * time.Second

// Effects of an event, as the inbox records them.
const (
	EffectDuplicate = "duplicate" // handled before: nothing done (never stored)
	EffectRecorded  = "recorded"  // nothing to do beyond the record
	EffectPending   = "pending"   // its key is still started: its attempt or the completer finishes it; the reconciler watches it
	EffectMatched   = "matched"   // an order holds the intent
	EffectRefunded  = "refunded"  // refunded now: no order holds it and none will
	EffectIgnored   = "ignored"   // a type the shop does not handle
	EffectForeign   = "foreign"   // an intent this database did not make: recorded, never refunded
	// EffectRefundRefused: the provider refused the refund for good; the
	// intent is parked for an operator (refused_refunds).
	EffectRefundRefused = "refund_refused"
)

// errDuplicate rolls back a transaction whose event is in the inbox already.
var errDuplicate = errors.New("event handled before")

// recordEvent is the inbox insert's answer as an error: errDuplicate when
// it wrote no row (the event was recorded before).
func recordEvent(_ string, err error) error {
	if errors.Is(err, database.ErrNotFound) {
		return errDuplicate
	}
	return err
}

// Handle applies a verified event once and names its effect.
//
// A delivery seen before is found by the inbox's insert, which writes no
// row for it (RecordStripeEvent), not by a read ahead of the work: every
// event would pay that round trip for the rare one delivered twice, and
// what the work does before the insert is safe to do twice (the match
// reads; a refund is sent with the intent's own key, so a second one is the
// first's replay; a foreign intent is recorded and counted once).
func (h *Handler) Handle(ctx context.Context, ev stripe.Event) (string, error) {
	var err error
	// awaiting: the succeeded intent's key waits for the shopper's bank,
	// so this event may settle it (settleAwaiting).
	awaiting := false
	rec := db.RecordStripeEventParams{EventID: ev.ID, Type: string(ev.Type), Created: ev.Created, Effect: EffectIgnored}
	var refund *db.RecordRefundParams
	switch ev.Type {
	case "payment_intent.succeeded", "payment_intent.payment_failed", "payment_intent.canceled":
		var pi stripe.PaymentIntent
		if err := json.Unmarshal(ev.Data.Raw, &pi); err != nil {
			return "", fmt.Errorf("decode payment intent: %w", err)
		}
		in := payment.IntentOf(&pi)
		rec.PaymentIntentID, rec.Key, rec.Effect = in.ID, in.Metadata.Key, EffectRecorded
		rec.CustomerID, _ = uuid.Parse(in.Metadata.CustomerID)
		if ev.Type == "payment_intent.succeeded" {
			if rec.Effect, refund, awaiting, err = h.succeeded(ctx, in); err != nil {
				return "", err
			}
		}
	case "charge.refunded":
		var ch stripe.Charge
		if err := json.Unmarshal(ev.Data.Raw, &ch); err != nil {
			return "", fmt.Errorf("decode charge: %w", err)
		}
		if ch.PaymentIntent != nil {
			rec.PaymentIntentID = ch.PaymentIntent.ID
		}
		rec.Key, rec.Effect = ch.Metadata["idempotency_key"], EffectRecorded
		rec.CustomerID, _ = uuid.Parse(ch.Metadata["customer_id"])
	}
	span := trace.SpanFromContext(ctx) // the delivery's request span
	span.SetAttributes(attribute.String("stripe.event", ev.ID), attribute.String("stripe.event_type", string(ev.Type)),
		tracing.AttrOutcome.String(rec.Effect))
	if rec.Key != "" && rec.CustomerID != uuid.Nil {
		// Listed under the key's traces: what Stripe said of its intent.
		span.SetAttributes(tracing.KeyAttributes(rec.CustomerID.String(), rec.Key)...)
	}
	refunded := false
	switch {
	case refund != nil:
		err = h.db.InTx(ctx, func(q *db.Queries) error {
			_, err := q.RecordRefund(ctx, *refund)
			switch {
			case err == nil:
				refunded = true
			case !errors.Is(err, database.ErrNotFound): // recorded first by the reconciler: no second record
				return fmt.Errorf("record refund: %w", err)
			}
			return recordEvent(q.RecordStripeEvent(ctx, rec))
		})
	case rec.Effect == EffectPending:
		// Pending is not the end: should the key be lost before its order
		// is written, the reconciler, which watches the intent by id,
		// refunds it. The watch and the record are one statement.
		err = recordEvent(h.db.RecordPendingStripeEvent(ctx, db.RecordPendingStripeEventParams(rec)))
	default:
		// The record is the event's only write: one statement, which
		// commits on its own.
		err = recordEvent(h.db.RecordStripeEvent(ctx, rec))
	}
	switch {
	case errors.Is(err, errDuplicate):
		return EffectDuplicate, nil
	case err != nil:
		return "", fmt.Errorf("record event: %w", err)
	}
	if h.Settle != nil && (ev.Type == "payment_intent.succeeded" && rec.Effect == EffectPending && awaiting || ev.Type == "payment_intent.payment_failed") {
		// After the record: the settling is the order's (or the decline's)
		// own transaction, under the key's lock, and the event's effect
		// stays what was recorded.
		h.settleAwaiting(ctx, rec.PaymentIntentID)
	}
	if refunded {
		h.metrics.Refunds.Inc()
		h.log.WarnContext(ctx, "stripe webhook: refunded a payment intent that no order holds",
			"payment_intent", rec.PaymentIntentID, logging.Key(rec.Key), "customer_id", rec.CustomerID,
			"lost_operation", refund.LostOperation)
	}
	return rec.Effect, nil
}

// settleAwaiting settles, now, the key that waits for its shopper to
// authenticate the intent (found by the intent's id), once the event is
// recorded. A key that cannot be settled now is left: to whoever holds it
// (the shopper's return, a retry), or to the completer (the provider out
// of reach). Nothing here is the delivery's failure: the event is recorded.
func (h *Handler) settleAwaiting(ctx context.Context, intentID string) {
	k, err := h.db.AwaitingKeyOfIntent(ctx, intentID)
	if err != nil {
		if !errors.Is(err, database.ErrNotFound) {
			h.log.WarnContext(ctx, "stripe webhook: find the key awaiting authentication", "payment_intent", intentID, "err", err)
		}
		return
	}
	outcome, err := h.Settle(ctx, k.CustomerID, k.Key)
	if err != nil {
		h.log.InfoContext(ctx, "stripe webhook: key awaiting authentication left to its holder or the completer",
			logging.Key(k.Key), "payment_intent", intentID, "outcome", outcome, "err", err)
		return
	}
	h.log.InfoContext(ctx, "stripe webhook: settled the key awaiting authentication", logging.Key(k.Key),
		"payment_intent", intentID, "outcome", outcome)
}

// succeeded decides what a succeeded intent needs, and refunds it at the
// provider when no order holds it and none will; the record of the refund
// is returned, to be written with the event. The intent is matched to an
// order and a key by its id alone (MatchIntent), never by the event's
// metadata: a paid order's intent is matched whatever the metadata says.
// Only an intent no key row stores, whose metadata carries this
// deployment's marker and names one of its customers, is taken for a lost
// operation's; any other is foreign, recorded for an operator and left
// alone.
func (h *Handler) succeeded(ctx context.Context, in payment.Intent) (effect string, _ *db.RecordRefundParams, awaiting bool, _ error) {
	m, err := h.db.MatchIntent(ctx, lifecycle.MatchParams(in))
	switch {
	case err != nil:
		return "", nil, false, fmt.Errorf("match intent: %w", err)
	case m.HasOrder:
		return EffectMatched, nil, false, nil
	case m.RefundRecorded, m.RefundRefused:
		return EffectRecorded, nil, false, nil
	case m.KeyStatus == "" && !m.Ours:
		if err := lifecycle.RecordForeign(ctx, h.db, h.metrics, h.log, in, lifecycle.SourceWebhook); err != nil {
			return "", nil, false, err
		}
		return EffectForeign, nil, false, nil
	case m.KeyStatus == "started":
		return EffectPending, nil, m.KeyAwaiting, nil
	}
	refundID, err := lifecycle.RefundIntent(ctx, h.refunder, in)
	var refused *payment.ProviderError
	if errors.As(err, &refused) && !refused.Transient() {
		// Asking again would be refused again: parked for an operator,
		// as the reconciler parks it, and answered so that Stripe stops.
		if err := lifecycle.ParkRefusedRefund(ctx, h.db, h.metrics, h.log, in, refused); err != nil {
			return "", nil, false, err
		}
		return EffectRefundRefused, nil, false, nil
	}
	if err != nil {
		return "", nil, false, fmt.Errorf("refund: %w", err)
	}
	rec := lifecycle.RefundRecord(in, refundID, m.KeyStatus == "")
	return EffectRefunded, &rec, false, nil
}
