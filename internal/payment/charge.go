package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// Charge statuses.
const (
	StatusSucceeded = "succeeded"
	StatusDeclined  = "declined"
)

// ChargeRequest asks for a charge. Calls with the same IdempotencyKey and
// the same parameters charge at most once.
type ChargeRequest struct {
	IdempotencyKey string
	Amount         int64 // in the currency's smallest unit
	Currency       string
	Card           string
	Description    string
}

// Charge is a charge made by the provider.
type Charge struct {
	ID        string
	Amount    int64
	Currency  string
	Status    string // StatusSucceeded or StatusDeclined
	CardLast4 string
	// Replayed reports that the provider answered from an earlier call with
	// the same idempotency key rather than charging now.
	Replayed bool
}

// Charge charges a card. Besides a Charge, it returns a *DeclinedError, an
// *UnavailableError, a *ProviderError or ErrCanceled; see each for what it
// means.
func (c *Client) Charge(ctx context.Context, req ChargeRequest) (Charge, error) {
	if req.IdempotencyKey == "" {
		return Charge{}, errors.New("charge: idempotency key is required")
	}
	body, err := json.Marshal(struct {
		Amount      int64  `json:"amount"`
		Currency    string `json:"currency"`
		Card        string `json:"card"`
		Description string `json:"description"`
	}{req.Amount, req.Currency, req.Card, req.Description})
	if err != nil {
		return Charge{}, fmt.Errorf("charge: %w", err)
	}
	resp, err := c.do(ctx, http.MethodPost, "/v1/charges", req.IdempotencyKey, body)
	if err != nil {
		return Charge{}, fmt.Errorf("charge: %w", err)
	}
	if resp.status == http.StatusOK || resp.status == http.StatusCreated {
		ch, err := resp.charge()
		if err != nil {
			return Charge{}, fmt.Errorf("charge: %w", err)
		}
		return ch, nil
	}
	if e, ok := resp.apiError(); ok && resp.status == http.StatusBadRequest && e.Code == codeKeyCanceled {
		return Charge{}, fmt.Errorf("charge: %w", ErrCanceled)
	}
	return Charge{}, fmt.Errorf("charge: %w", scrub(resp.failure(), req.Card))
}

// codeKeyCanceled is the provider's error code for a create-charge call whose
// idempotency key was canceled.
const codeKeyCanceled = "idempotency_key_canceled"

// FindCharge returns the charge made with idempotencyKey, declined ones
// included, or ErrNoCharge. ErrNoCharge means "no charge yet": a call still
// on its way to the provider may charge after it, so acting on it as a final
// answer needs Cancel instead. (Stripe has no look-up by idempotency key at
// all: a shop stores the id of the object it created and retrieves that.)
func (c *Client) FindCharge(ctx context.Context, idempotencyKey string) (Charge, error) {
	if idempotencyKey == "" {
		return Charge{}, errors.New("find charge: idempotency key is required")
	}
	resp, err := c.do(ctx, http.MethodGet, "/v1/charges?idempotency_key="+url.QueryEscape(idempotencyKey), "", nil)
	if err != nil {
		return Charge{}, fmt.Errorf("find charge: %w", err)
	}
	switch resp.status {
	case http.StatusOK:
		ch, err := resp.charge()
		if err != nil {
			return Charge{}, fmt.Errorf("find charge: %w", err)
		}
		return ch, nil
	case http.StatusNotFound:
		// Only the provider's own "resource_missing" proves there is no
		// charge. Any other 404 (a wrong base URL, a proxy) says nothing
		// about the charge, and taking it for "not charged" would let the
		// caller charge twice.
		if e, ok := resp.apiError(); ok && e.Code == "resource_missing" {
			return Charge{}, ErrNoCharge
		}
	}
	return Charge{}, fmt.Errorf("find charge: %w", resp.failure())
}

// chargeJSON is a charge as the provider sends it.
type chargeJSON struct {
	ID        string `json:"id"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Status    string `json:"status"`
	CardLast4 string `json:"card_last4"`
}

// apiErrorJSON is the provider's error shape, without its envelope.
type apiErrorJSON struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Charge  string `json:"charge"`
}

// charge decodes a successful answer.
func (r response) charge() (Charge, error) {
	var ch chargeJSON
	if err := json.Unmarshal(r.body, &ch); err != nil || ch.ID == "" {
		return Charge{}, &UnavailableError{Reason: ReasonFailed, Status: r.status,
			Err: errors.New("unreadable charge in answer")}
	}
	return Charge{
		ID:        ch.ID,
		Amount:    ch.Amount,
		Currency:  ch.Currency,
		Status:    ch.Status,
		CardLast4: ch.CardLast4,
		Replayed:  r.replayed,
	}, nil
}

func (r response) apiError() (apiErrorJSON, bool) {
	var env struct {
		Error *apiErrorJSON `json:"error"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil || env.Error == nil || env.Error.Type == "" {
		return apiErrorJSON{}, false
	}
	return *env.Error, true
}

// failure turns an answer that is not a charge into the error it means.
func (r response) failure() error {
	e, ok := r.apiError()
	switch {
	case r.status >= 500:
		err := errors.New("server error")
		if ok {
			err = fmt.Errorf("%s: %s", e.Type, e.Message)
		}
		return &UnavailableError{Reason: ReasonFailed, Status: r.status, Err: err}
	case r.status == http.StatusPaymentRequired && ok && e.Charge != "":
		return &DeclinedError{ChargeID: e.Charge, Message: e.Message}
	case r.status >= 400 && r.status < 500 && r.status != http.StatusPaymentRequired:
		if !ok {
			return &ProviderError{Status: r.status, Message: http.StatusText(r.status)}
		}
		return &ProviderError{Status: r.status, Type: e.Type, Message: e.Message}
	default:
		// A 402 without a charge, a redirect, an informational status: none
		// is an answer this API gives, so the outcome is unknown.
		return &UnavailableError{Reason: ReasonFailed, Status: r.status,
			Err: fmt.Errorf("unexpected answer with status %d", r.status)}
	}
}
