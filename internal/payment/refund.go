package payment

import (
	"context"
	"errors"
	"fmt"

	"github.com/stripe/stripe-go/v85"
)

// Refund is a full refund of a PaymentIntent.
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
