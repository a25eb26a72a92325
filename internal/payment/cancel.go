package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Cancel gives the operation under idempotencyKey a final verdict at the
// provider, the way cancelling a Stripe PaymentIntent does. If a charge was
// made with the key it returns that charge (declined ones included);
// otherwise the provider marks the key canceled and Cancel returns
// ErrCanceled: nothing was charged, and a create-charge call with the key
// that reaches the provider later — one a stalled process sent, or one the
// network delivers late — charges nothing either. Cancelling again answers
// the same.
//
// This is what makes "no charge" safe to act on. A look-up (FindCharge)
// only says there is no charge yet.
func (c *Client) Cancel(ctx context.Context, idempotencyKey string) (Charge, error) {
	if idempotencyKey == "" {
		return Charge{}, errors.New("cancel: idempotency key is required")
	}
	body, err := json.Marshal(map[string]string{"idempotency_key": idempotencyKey})
	if err != nil {
		return Charge{}, fmt.Errorf("cancel: %w", err)
	}
	// No Idempotency-Key of its own: a cancel is idempotent by nature.
	resp, err := c.do(ctx, http.MethodPost, "/v1/charges/cancel", "", body)
	if err != nil {
		return Charge{}, fmt.Errorf("cancel: %w", err)
	}
	if resp.status != http.StatusOK {
		return Charge{}, fmt.Errorf("cancel: %w", resp.failure())
	}
	var status struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(resp.body, &status); err == nil && status.Status == "canceled" {
		return Charge{}, ErrCanceled
	}
	ch, err := resp.charge()
	if err != nil {
		return Charge{}, fmt.Errorf("cancel: %w", err)
	}
	return ch, nil
}
