package payment

import (
	"context"
	"errors"
	"fmt"

	"github.com/stripe/stripe-go/v85"
)

// Refund is a refund of a PaymentIntent: in full (Refund) or of an amount
// (RefundAmount).
type Refund struct {
	ID       string
	IntentID string
	Amount   int64
	// Replayed reports that the provider answered from an earlier call with
	// the same idempotency key.
	Replayed bool
}

// RefundKey is the idempotency key of the refund of a PaymentIntent: the
// same for the engine (a charge of another amount than its order's), every
// reconciler, every pass and the webhook handler, so the provider refunds an
// intent once.
func RefundKey(intentID string) string { return "refund_" + intentID }

// ErrAlreadyRefunded means the intent was refunded by another refund than
// the one asked for (another key: an operator in the dashboard).
var ErrAlreadyRefunded = errors.New("payment intent already refunded")

// Refund refunds a succeeded intent in full. Calls with the same
// idempotencyKey refund at most once and answer the same refund, so a caller
// that lost the answer asks again with the same key.
func (c *Client) Refund(ctx context.Context, idempotencyKey, intentID string) (Refund, error) {
	if idempotencyKey == "" || intentID == "" {
		return Refund{}, errors.New("refund: idempotency key and payment intent are required")
	}
	p := &stripe.RefundCreateParams{PaymentIntent: stripe.String(intentID)}
	p.SetIdempotencyKey(idempotencyKey)
	p.Context = ctx
	r, err := c.sc.V1Refunds.Create(ctx, p)
	if err != nil {
		var se *stripe.Error
		if errors.As(err, &se) && se.Code == stripe.ErrorCodeChargeAlreadyRefunded {
			return Refund{}, fmt.Errorf("refund: %w", ErrAlreadyRefunded)
		}
		return Refund{}, fmt.Errorf("refund: %w", classify(ctx, err))
	}
	out := Refund{ID: r.ID, Amount: r.Amount}
	if r.PaymentIntent != nil {
		out.IntentID = r.PaymentIntent.ID
	}
	if r.LastResponse != nil {
		out.Replayed = r.LastResponse.Header.Get("Idempotent-Replayed") == "true"
	}
	return out, nil
}

// RefundRequest is a refund of part or all of a succeeded PaymentIntent that
// an order holds (internal/refund): a customer's cancel or an operator's
// refund.
type RefundRequest struct {
	// IdempotencyKey is derived from the shop's own key for the refund, so
	// that every attempt at it, and the completer, asks for one refund.
	IdempotencyKey string
	IntentID       string
	// Amount is in minor units, 1 to what is left unrefunded of the intent.
	Amount int64
	// Reason is Stripe's: requested_by_customer, duplicate or fraudulent;
	// empty for none.
	Reason string
	// Metadata names the shop's refund, for the dashboard and the webhooks.
	Metadata map[string]string
}

// RefundAmount refunds req.Amount of a succeeded intent. Calls with the same
// idempotency key refund at most once and answer the same refund. Its errors
// are the client's: *UnavailableError (the outcome is unknown: ask again
// with the same key), *ProviderError (the provider refused: for good unless
// Transient), and ErrAlreadyRefunded.
func (c *Client) RefundAmount(ctx context.Context, req RefundRequest) (Refund, error) {
	if req.IdempotencyKey == "" || req.IntentID == "" || req.Amount <= 0 {
		return Refund{}, errors.New("refund: idempotency key, payment intent and a positive amount are required")
	}
	p := &stripe.RefundCreateParams{PaymentIntent: stripe.String(req.IntentID), Amount: stripe.Int64(req.Amount)}
	if req.Reason != "" {
		p.Reason = stripe.String(req.Reason)
	}
	for k, v := range req.Metadata {
		p.AddMetadata(k, v)
	}
	p.SetIdempotencyKey(req.IdempotencyKey)
	p.Context = ctx
	r, err := c.sc.V1Refunds.Create(ctx, p)
	if err != nil {
		var se *stripe.Error
		if errors.As(err, &se) && se.Code == stripe.ErrorCodeChargeAlreadyRefunded {
			return Refund{}, fmt.Errorf("refund: %w", ErrAlreadyRefunded)
		}
		return Refund{}, fmt.Errorf("refund: %w", classify(ctx, err))
	}
	out := Refund{ID: r.ID, Amount: r.Amount, IntentID: req.IntentID}
	if r.LastResponse != nil {
		out.Replayed = r.LastResponse.Header.Get("Idempotent-Replayed") == "true"
	}
	return out, nil
}
