package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Refund is a full refund of a charge.
type Refund struct {
	ID       string
	ChargeID string
	Amount   int64
	// Replayed reports that the provider answered from an earlier call with
	// the same idempotency key.
	Replayed bool
}

// Refund refunds a succeeded charge in full. Calls with the same
// idempotencyKey refund at most once and answer the same refund, so a caller
// that lost the answer retries with the same key.
func (c *Client) Refund(ctx context.Context, idempotencyKey, chargeID string) (Refund, error) {
	if idempotencyKey == "" || chargeID == "" {
		return Refund{}, errors.New("refund: idempotency key and charge are required")
	}
	body, err := json.Marshal(map[string]string{"charge": chargeID})
	if err != nil {
		return Refund{}, fmt.Errorf("refund: %w", err)
	}
	resp, err := c.do(ctx, http.MethodPost, "/v1/refunds", idempotencyKey, body)
	if err != nil {
		return Refund{}, fmt.Errorf("refund: %w", err)
	}
	if resp.status != http.StatusOK {
		return Refund{}, fmt.Errorf("refund: %w", resp.failure())
	}
	var r struct {
		ID     string `json:"id"`
		Charge string `json:"charge"`
		Amount int64  `json:"amount"`
	}
	if err := json.Unmarshal(resp.body, &r); err != nil || r.ID == "" {
		return Refund{}, fmt.Errorf("refund: %w", &UnavailableError{Reason: ReasonFailed, Status: resp.status,
			Err: errors.New("unreadable refund in answer")})
	}
	return Refund{ID: r.ID, ChargeID: r.Charge, Amount: r.Amount, Replayed: resp.replayed}, nil
}
