package fakestripe

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// createRefund serves POST /v1/refunds: a full refund of a succeeded
// PaymentIntent (payment_intent, or its charge), once per intent; the
// refund is its own object, with an idempotency key of its own.
func (p *Provider) createRefund(c echo.Context) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	ps, err := checkParams(form, "payment_intent", "charge", "amount", "reason", "metadata[", "expand[")
	if err != nil {
		return err
	}
	id, charge := ps.str("payment_intent"), ps.str("charge")
	if id == "" && charge == "" {
		return invalidRequest("parameter_missing", "payment_intent", "Must provide one of payment_intent or charge.")
	}
	amount, partial, err := ps.int("amount")
	if err != nil {
		return err
	}
	a, replayed, err := p.idempotent(c, form, func(ctx context.Context, tx storeTx) (answer, error) {
		if id == "" {
			var err error
			id, err = tx.intentOfCharge(ctx, charge)
			if errors.Is(err, errNotFound) {
				return answer{}, missing("charge", "charge", charge)
			}
			if err != nil {
				return answer{}, err
			}
		}
		in, err := tx.lockIntent(ctx, id)
		if errors.Is(err, errNotFound) {
			return answer{}, missing("payment_intent", "payment_intent", id)
		}
		if err != nil {
			return answer{}, fmt.Errorf("read intent: %w", err)
		}
		switch {
		case in.Status != StatusSucceeded:
			return answer{}, invalidRequest("charge_not_refundable", "payment_intent",
				"This PaymentIntent does not have a successful charge to refund.")
		case partial && amount != in.Amount:
			return answer{}, invalidRequest("parameter_invalid_integer", "amount", "The fake refunds in full only.")
		case in.Refunded:
			e := invalidRequest("charge_already_refunded", "", fmt.Sprintf("Charge %s has already been refunded.", *in.LatestCharge))
			e.Charge = *in.LatestCharge
			return answer{status: e.Status, body: e.body(), save: true}, nil
		}
		r := Refund{ID: newID("re_"), PaymentIntentID: in.ID, Charge: *in.LatestCharge, Amount: in.Amount, Currency: in.Currency}
		if err := tx.insertRefund(ctx, &r); err != nil {
			return answer{}, err
		}
		in.Refunded = true
		return answer{status: http.StatusOK, body: r.JSON(), save: true,
			events: []event{{typ: "charge.refunded", object: chargeJSON(in)}}}, nil
	})
	if err != nil {
		return err
	}
	if !replayed {
		p.hooks.send(c.Request().Context(), a.events)
	}
	return reply(c, a)
}

// Refund is a refund as the fake stores it.
type Refund struct {
	ID, PaymentIntentID, Charge, Currency string
	Amount, Created                       int64
}

// JSON is the refund as Stripe's API shows it.
func (r Refund) JSON() []byte {
	return mustJSON(map[string]any{
		"id": r.ID, "object": "refund", "amount": r.Amount, "balance_transaction": nil, "charge": r.Charge,
		"created": r.Created, "currency": r.Currency, "metadata": map[string]string{}, "payment_intent": r.PaymentIntentID,
		"reason": nil, "receipt_number": nil, "source_transfer_reversal": nil, "status": "succeeded", "transfer_reversal": nil,
	})
}

// chargeJSON is the charge of a succeeded intent as a charge.refunded
// event carries it: the fields Stripe's charge object requires, and those
// the shop reads (payment_intent, metadata).
func chargeJSON(in Intent) []byte {
	refunded := int64(0)
	if in.Refunded {
		refunded = in.Amount
	}
	return mustJSON(map[string]any{
		"id": *in.LatestCharge, "object": "charge", "amount": in.Amount, "amount_captured": in.Amount,
		"amount_refunded": refunded, "captured": true, "created": in.Created, "currency": in.Currency,
		"billing_details": map[string]any{"address": nil, "email": nil, "name": nil, "phone": nil}, "disputed": false,
		"livemode": false, "metadata": in.Metadata, "paid": true, "payment_intent": in.ID,
		"payment_method": in.PaymentMethod, "refunded": in.Refunded, "status": "succeeded",
	})
}
