package fakestripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// refundReasons are the reasons Stripe takes for a refund.
var refundReasons = []string{"duplicate", "fraudulent", "requested_by_customer"}

// maxRefundAmount is the largest amount Stripe takes in one call.
const maxRefundAmount = 99999999

// createRefund serves POST /v1/refunds as Stripe does: a refund of a
// succeeded PaymentIntent (payment_intent, or its charge) of amount, or of
// what is left unrefunded when amount is absent, with its reason and
// metadata. An intent takes any number of refunds, each its own object
// under an idempotency key of its own, never more in all than it charged:
// they are decided one at a time under the intent's lock. A refund past
// what is left is refused, 400 invalid_request_error on param amount with
// no code, as Stripe refuses it; one of an intent refunded in full is 400
// charge_already_refunded. Both are stored under the key, as answers to a
// request that began executing are.
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
	switch {
	case err != nil:
		return err
	case partial && amount < 1:
		return invalidRequest("parameter_invalid_integer", "amount", "Invalid positive integer")
	case partial && amount > maxRefundAmount:
		return invalidRequest("amount_too_large", "amount", "Amount must be no more than $999,999.99")
	}
	var reason *string
	if r := ps.str("reason"); r != "" {
		if !slices.Contains(refundReasons, r) {
			return invalidRequest("parameter_invalid", "reason",
				"Invalid reason: must be one of duplicate, fraudulent, or requested_by_customer")
		}
		reason = &r
	}
	metadata := ps.hash("metadata")
	fault, err := p.beforeRefunding(c)
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
		left := in.Amount - in.AmountRefunded
		switch {
		case in.Status != StatusSucceeded:
			return answer{}, invalidRequest("charge_not_refundable", "payment_intent",
				"This PaymentIntent does not have a successful charge to refund.")
		case left <= 0:
			e := invalidRequest("charge_already_refunded", "", fmt.Sprintf("Charge %s has already been refunded.", *in.LatestCharge))
			e.Charge = *in.LatestCharge
			return answer{status: e.Status, body: e.body(), save: true}, nil
		case partial && amount > left:
			e := invalidRequest("", "amount", fmt.Sprintf("Refund amount (%s) is greater than unrefunded amount on charge (%s)",
				money(amount, in.Currency), money(left, in.Currency)))
			return answer{status: e.Status, body: e.body(), save: true}, nil
		case !partial:
			amount = left
		}
		r := Refund{ID: newID("re_"), PaymentIntentID: in.ID, Charge: *in.LatestCharge, Amount: amount, Currency: in.Currency,
			Reason: reason, Metadata: metadata}
		if err := tx.insertRefund(ctx, &r); err != nil {
			return answer{}, err
		}
		in.AmountRefunded += amount
		in.refundedInFull()
		return answer{status: http.StatusOK, body: r.JSON(), save: true, events: []event{
			{typ: "charge.refunded", object: chargeJSON(in)},
			{typ: "refund.created", object: r.JSON()},
		}}, nil
	})
	if err != nil {
		return err
	}
	if !replayed {
		p.hooks.send(c.Request().Context(), a.events)
	}
	if fault == FaultAfterCharge {
		return p.inject(c.Request().Context(), fault)
	}
	return reply(c, a)
}

// beforeRefunding is what a refund meets before it is processed: the
// refund faults (Behaviour.Refunds), which lose it before it is made
// (before_charge) or hang until the client gives up (timeout, after which
// it is made anyway). It returns the refund's fault.
func (p *Provider) beforeRefunding(c echo.Context) (Fault, error) {
	ctx := c.Request().Context()
	fault := p.refundFault()
	switch fault {
	case FaultBeforeCharge:
		return fault, p.inject(ctx, fault)
	case FaultTimeout:
		hang, cancel := context.WithTimeout(ctx, MaxHang)
		<-hang.Done()
		cancel()
	}
	return fault, nil
}

// retrieveRefund serves GET /v1/refunds/:id.
func (p *Provider) retrieveRefund(c echo.Context) error {
	r, err := p.store.refund(c.Request().Context(), c.Param("id"))
	if errors.Is(err, errNotFound) {
		return missing("refund", "refund", c.Param("id"))
	}
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, r.JSON())
}

// Refund returns the refund id, or errNotFound.
func (p *Provider) Refund(ctx context.Context, id string) (Refund, error) {
	return p.store.refund(ctx, id)
}

// Refunds returns the refunds of the PaymentIntent id, oldest first.
func (p *Provider) Refunds(ctx context.Context, id string) ([]Refund, error) {
	return p.store.refunds(ctx, refundQuery{intentID: id})
}

// Refund is a refund as the fake stores it.
type Refund struct {
	ID, PaymentIntentID, Charge, Currency string
	// Seq orders the refunds, as an intent's Seq orders the intents.
	Seq      int64
	Amount   int64
	Created  int64
	Reason   *string
	Metadata map[string]string
}

// metadata is r's metadata, never nil.
func (r Refund) metadata() map[string]string {
	if r.Metadata == nil {
		return map[string]string{}
	}
	return r.Metadata
}

// JSON is the refund as Stripe's API shows it.
func (r Refund) JSON() json.RawMessage {
	return mustJSON(map[string]any{
		"id": r.ID, "object": "refund", "amount": r.Amount, "balance_transaction": nil, "charge": r.Charge,
		"created": r.Created, "currency": r.Currency, "metadata": r.metadata(), "payment_intent": r.PaymentIntentID,
		"reason": r.Reason, "receipt_number": nil, "source_transfer_reversal": nil, "status": "succeeded", "transfer_reversal": nil,
	})
}

// chargeJSON is the charge of a succeeded intent as a charge.refunded
// event carries it: the fields Stripe's charge object requires, and those
// the shop reads (payment_intent, metadata). amount_refunded is what all
// its refunds gave back, and refunded is true only once that is all of it,
// as Stripe shows them. Its refunds are not there: since API version
// 2022-11-15 Stripe no longer expands a charge's refunds by default, and
// an event cannot ask it to (refund.created carries each refund).
func chargeJSON(in Intent) []byte {
	return mustJSON(map[string]any{
		"id": *in.LatestCharge, "object": "charge", "amount": in.Amount, "amount_captured": in.Amount,
		"amount_refunded": in.AmountRefunded, "captured": true, "created": in.Created, "currency": in.Currency,
		"billing_details": map[string]any{"address": nil, "email": nil, "name": nil, "phone": nil}, "disputed": false,
		"livemode": false, "metadata": in.Metadata, "paid": true, "payment_intent": in.ID,
		"payment_method": in.PaymentMethod, "refunded": in.Refunded, "status": "succeeded",
	})
}

// money writes an amount in minor units as Stripe's refusals do: $12.34
// for dollars, €12.34 for euros, £12.34 for pounds, 12.34 XYZ otherwise.
func money(amount int64, currency string) string {
	n := fmt.Sprintf("%d.%02d", amount/100, amount%100)
	switch currency {
	case "usd":
		return "$" + n
	case "eur":
		return "€" + n
	case "gbp":
		return "£" + n
	}
	return n + " " + strings.ToUpper(currency)
}
