package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ListedCharge is a charge as the provider's list shows it.
type ListedCharge struct {
	Charge
	// IdempotencyKey is the key the charge was made with. (The fake
	// provider lists it; with Stripe a shop sets its own reference as the
	// charge's metadata.)
	IdempotencyKey string
	Refunded       bool
	Created        time.Time
}

// ChargePage is one page of the provider's charges, oldest first.
type ChargePage struct {
	Charges []ListedCharge
	// HasMore is true when charges after the last of this page exist.
	HasMore bool
}

// ListCharges returns up to limit charges made after the charge with id
// after ("" for the first page), in creation order. Passing the last id of a
// page as after reads the next one.
func (c *Client) ListCharges(ctx context.Context, after string, limit int) (ChargePage, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if after != "" {
		q.Set("starting_after", after)
	}
	resp, err := c.do(ctx, http.MethodGet, "/v1/charges?"+q.Encode(), "", nil)
	if err != nil {
		return ChargePage{}, fmt.Errorf("list charges: %w", err)
	}
	if resp.status != http.StatusOK {
		return ChargePage{}, fmt.Errorf("list charges: %w", resp.failure())
	}
	var page struct {
		Data []struct {
			chargeJSON
			IdempotencyKey string `json:"idempotency_key"`
			Refunded       bool   `json:"refunded"`
			Created        int64  `json:"created"`
		} `json:"data"`
		HasMore bool `json:"has_more"`
	}
	if err := json.Unmarshal(resp.body, &page); err != nil {
		return ChargePage{}, fmt.Errorf("list charges: %w", &UnavailableError{Reason: ReasonFailed, Status: resp.status,
			Err: errors.New("unreadable list in answer")})
	}
	out := ChargePage{HasMore: page.HasMore, Charges: make([]ListedCharge, 0, len(page.Data))}
	for _, d := range page.Data {
		out.Charges = append(out.Charges, ListedCharge{
			Charge:         Charge{ID: d.ID, Amount: d.Amount, Currency: d.Currency, Status: d.Status, CardLast4: d.CardLast4},
			IdempotencyKey: d.IdempotencyKey, Refunded: d.Refunded, Created: time.Unix(d.Created, 0),
		})
	}
	return out, nil
}
