package fakestripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/labstack/echo/v4"
)

var currencyCode = regexp.MustCompile(`^[a-z]{3}$`)

// createIntent serves POST /v1/payment_intents: amount, currency,
// description, metadata, payment_method_types and, optionally,
// payment_method and confirm=true, which confirms it in the same call.
func (p *Provider) createIntent(c echo.Context) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	ps, err := checkParams(form, "amount", "currency", "description", "metadata[", "payment_method_types[",
		"payment_method", "confirm", "return_url", "expand[")
	if err != nil {
		return err
	}
	returnURL, err := ps.returnURL()
	if err != nil {
		return err
	}
	amount, ok, err := ps.int("amount")
	switch {
	case err != nil:
		return err
	case !ok:
		return invalidRequest("parameter_missing", "amount", "Missing required param: amount.")
	case amount < 1 || amount > 99999999:
		return invalidRequest("amount_too_small", "amount", "Amount must be a positive integer of at most eight digits.")
	}
	currency := ps.str("currency")
	if !currencyCode.MatchString(currency) {
		return invalidRequest("parameter_invalid", "currency", "Invalid currency: "+currency)
	}
	confirm, err := ps.bool("confirm")
	if err != nil {
		return err
	}
	pm := ps.str("payment_method")
	if pm != "" {
		if _, ok := testPaymentMethods[pm]; !ok {
			return missing("payment_method", "PaymentMethod", pm)
		}
	}
	if confirm && pm == "" {
		return invalidRequest("payment_intent_unexpected_state", "payment_method",
			"You cannot confirm this PaymentIntent because it's missing a payment method.")
	}
	if returnURL != "" && !confirm {
		return invalidRequest("parameter_invalid", "return_url", "return_url can only be given with confirm=true.")
	}
	var fault Fault = FaultNone
	if confirm {
		if fault, err = p.beforeCharging(c, ""); err != nil {
			return err
		}
	}
	in := Intent{ID: newID("pi_"), Amount: amount, Currency: currency, Metadata: ps.hash("metadata"), Status: StatusRequiresPaymentMethod}
	if d := ps.str("description"); d != "" {
		in.Description = &d
	}
	if pm != "" {
		in.PaymentMethod, in.Status = &pm, StatusRequiresConfirmation
	}
	a, replayed, err := p.idempotent(c, form, func(ctx context.Context, tx storeTx) (answer, error) {
		if err := tx.insertIntent(ctx, &in); err != nil {
			return answer{}, err
		}
		if confirm {
			in.ReturnURL, in.AuthenticateURL = authenticateAt(c, in.ID, returnURL)
			return p.charge(ctx, tx, in, pm, fault)
		}
		return answer{status: http.StatusOK, body: in.JSON(), save: true}, nil
	})
	return p.finishCharge(c, a, replayed, err, fault)
}

// confirmIntent serves POST /v1/payment_intents/:id/confirm, optionally
// with payment_method and return_url: the call that charges.
func (p *Provider) confirmIntent(c echo.Context) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	ps, err := checkParams(form, "payment_method", "return_url", "expand[")
	if err != nil {
		return err
	}
	returnURL, err := ps.returnURL()
	if err != nil {
		return err
	}
	pm := ps.str("payment_method")
	if pm != "" {
		if _, ok := testPaymentMethods[pm]; !ok {
			return missing("payment_method", "PaymentMethod", pm)
		}
	}
	id := c.Param("id")
	fault, err := p.beforeCharging(c, id)
	if err != nil {
		return err
	}
	a, replayed, err := p.idempotent(c, form, func(ctx context.Context, tx storeTx) (answer, error) {
		in, err := tx.lockIntent(ctx, id)
		if errors.Is(err, errNotFound) {
			return answer{}, missing("intent", "payment_intent", id)
		}
		if err != nil {
			return answer{}, fmt.Errorf("read intent: %w", err)
		}
		in, events, err := moveOn(ctx, tx, in, nil)
		if err != nil {
			return answer{}, err
		}
		switch {
		case in.Status == StatusSucceeded || in.Status == StatusCanceled || in.Status == StatusProcessing:
			a := unexpectedState(in, "confirm")
			a.events = events
			return a, nil
		case pm == "" && in.PaymentMethod == nil:
			return answer{}, invalidRequest("payment_intent_unexpected_state", "payment_method",
				"You cannot confirm this PaymentIntent because it's missing a payment method.")
		case pm == "":
			pm = *in.PaymentMethod
		}
		in.ReturnURL, in.AuthenticateURL = authenticateAt(c, in.ID, returnURL)
		return p.charge(ctx, tx, in, pm, fault)
	})
	return p.finishCharge(c, a, replayed, err, fault)
}

// beforeCharging is what a charging call meets before it is processed: the
// behaviour's delay (a client that gives up during it charges nothing), a
// fault that loses the call before it charges, a hang until the client
// gives up, and the test hook. It returns the call's fault.
func (p *Provider) beforeCharging(c echo.Context, id string) (Fault, error) {
	ctx := c.Request().Context()
	b := p.callBehaviour()
	if err := sleep(ctx, b.Delay); err != nil {
		return FaultNone, fmt.Errorf("delay: %w", err)
	}
	fault := b.fault(p.draw())
	switch fault {
	case FaultBeforeCharge:
		return fault, p.inject(ctx, fault)
	case FaultTimeout:
		hang, cancel := context.WithTimeout(ctx, MaxHang)
		<-hang.Done()
		cancel()
	}
	if p.beforeCharge != nil {
		p.beforeCharge(context.WithoutCancel(ctx), id)
	}
	return fault, nil
}

// charge confirms in with the payment method pm: it succeeds with a new
// charge, or is declined (the test card, or the decline fault), which
// leaves the intent requires_payment_method with its last_payment_error,
// answered 402 with the intent inside the card error, as Stripe does. A
// card that asks for 3-D Secure (or the requires_action fault) leaves it
// requires_action, charging nothing; a processing card (or fault) leaves it
// processing, to move on later to what the card does (see moveOn). Both
// are answered 200, as Stripe answers them: a confirm that returned
// without an error has not always charged.
func (p *Provider) charge(ctx context.Context, tx storeTx, in Intent, pm string, fault Fault) (answer, error) {
	card := testPaymentMethods[pm]
	charge := newID("ch_")
	in.PaymentMethod, in.LatestCharge = &pm, &charge
	switch {
	case fault == FaultDecline:
		return declineIntent(ctx, tx, in, "generic_decline")
	case fault == FaultRequiresAction || card.action && fault != FaultProcessing:
		// No charge is made before the shopper authenticates.
		in.Status, in.LatestCharge = StatusRequiresAction, nil
		if err := tx.saveIntent(ctx, in); err != nil {
			return answer{}, err
		}
		return answer{status: http.StatusOK, body: in.JSON(), save: true,
			events: []event{{typ: "payment_intent.requires_action", object: in.JSON()}}}, nil
	case fault == FaultProcessing || card.processing:
		in.Status = StatusProcessing
		if d := p.Behaviour().ProcessingFor; d > 0 {
			until := time.Now().Add(d).UnixMilli()
			in.ProcessingUntil = &until
		}
		if err := tx.saveIntent(ctx, in); err != nil {
			return answer{}, err
		}
		return answer{status: http.StatusOK, body: in.JSON(), save: true,
			events: []event{{typ: "payment_intent.processing", object: in.JSON()}}}, nil
	case card.declineCode != "":
		return declineIntent(ctx, tx, in, card.declineCode)
	}
	return succeedIntent(ctx, tx, in)
}

// succeedIntent makes in succeeded, its charge made.
func succeedIntent(ctx context.Context, tx storeTx, in Intent) (answer, error) {
	in.Status, in.ProcessingUntil = StatusSucceeded, nil
	if err := tx.saveIntent(ctx, in); err != nil {
		return answer{}, err
	}
	return answer{status: http.StatusOK, body: in.JSON(), save: true,
		events: []event{{typ: "payment_intent.succeeded", object: in.JSON()}}}, nil
}

// declineIntent declines in's charge with the decline code: the intent is
// requires_payment_method again, with its last_payment_error.
func declineIntent(ctx context.Context, tx storeTx, in Intent, decline string) (answer, error) {
	charge := ""
	if in.LatestCharge != nil {
		charge = *in.LatestCharge
	}
	declined := &apiError{
		Status: http.StatusPaymentRequired, Type: typeCard, Code: "card_declined", DeclineCode: decline,
		Message: "Your card was declined.", Charge: charge,
	}
	lastError, err := json.Marshal(declined)
	if err != nil {
		return answer{}, fmt.Errorf("marshal decline: %w", err)
	}
	in.Status, in.LastPaymentError, in.ProcessingUntil = StatusRequiresPaymentMethod, lastError, nil
	if err := tx.saveIntent(ctx, in); err != nil {
		return answer{}, err
	}
	declined.PaymentIntent = in.JSON()
	return answer{status: http.StatusPaymentRequired, body: declined.body(), save: true,
		events: []event{{typ: "payment_intent.payment_failed", object: in.JSON()}}}, nil
}

// moveOn moves a processing intent on, when its time has come (or at once
// with succeed set, which also says how): to succeeded, or failed as its
// card fails (requires_payment_method with the decline). It returns the
// intent as it is now and the events to send once committed; any other
// intent comes back as it was.
func moveOn(ctx context.Context, tx storeTx, in Intent, succeed *bool) (Intent, []event, error) {
	if in.Status != StatusProcessing {
		return in, nil, nil
	}
	if succeed == nil && (in.ProcessingUntil == nil || time.Now().UnixMilli() < *in.ProcessingUntil) {
		return in, nil, nil
	}
	var card testCard
	if in.PaymentMethod != nil {
		card = testPaymentMethods[*in.PaymentMethod]
	}
	ok := card.declineCode == ""
	if succeed != nil {
		ok = *succeed
	}
	var (
		a   answer
		err error
	)
	if ok {
		a, err = succeedIntent(ctx, tx, in)
	} else {
		decline := card.declineCode
		if decline == "" {
			decline = "generic_decline"
		}
		a, err = declineIntent(ctx, tx, in, decline)
	}
	if err != nil {
		return Intent{}, nil, err
	}
	in, err = tx.lockIntent(ctx, in.ID)
	if err != nil {
		return Intent{}, nil, fmt.Errorf("read intent: %w", err)
	}
	return in, a.events, nil
}

// MoveOn moves the processing intent id on at once: to succeeded, or to
// failed (requires_payment_method with a generic decline). An intent that
// is not processing is left as it is. For tests, and for a person trying
// the shop, as a bank settling a slow payment.
func (p *Provider) MoveOn(ctx context.Context, id string, succeed bool) (Intent, error) {
	return p.advance(ctx, id, &succeed)
}

// advance is moveOn in a transaction of its own, its events sent once
// committed.
func (p *Provider) advance(ctx context.Context, id string, succeed *bool) (Intent, error) {
	var (
		in     Intent
		events []event
	)
	err := p.store.inTx(ctx, func(tx storeTx) error {
		var err error
		if in, err = tx.lockIntent(ctx, id); err != nil {
			return err
		}
		in, events, err = moveOn(ctx, tx, in, succeed)
		return err
	})
	if err != nil {
		return Intent{}, err
	}
	p.hooks.send(ctx, events)
	return in, nil
}

// finishCharge answers a charging call and sends its events; with the
// after-charge fault the effect stands and the answer is lost (a 500).
func (p *Provider) finishCharge(c echo.Context, a answer, replayed bool, err error, fault Fault) error {
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if !replayed {
		p.hooks.send(ctx, a.events)
	}
	if fault == FaultAfterCharge {
		return p.inject(ctx, fault)
	}
	return reply(c, a)
}

// unexpectedState is Stripe's refusal of a confirm or a cancel of an intent
// that has succeeded, was canceled or is processing, with the intent inside the error: the
// answer a late confirm of a canceled intent gets.
func unexpectedState(in Intent, action string) answer {
	e := invalidRequest("payment_intent_unexpected_state", "",
		fmt.Sprintf("You cannot %s this PaymentIntent because it has a status of %s.", action, in.Status))
	e.PaymentIntent = in.JSON()
	return answer{status: e.Status, body: e.body(), save: true}
}

// cancelIntent serves POST /v1/payment_intents/:id/cancel.
func (p *Provider) cancelIntent(c echo.Context) error {
	form, err := readForm(c)
	if err != nil {
		return err
	}
	ps, err := checkParams(form, "cancellation_reason", "expand[")
	if err != nil {
		return err
	}
	reason := ps.str("cancellation_reason")
	switch reason {
	case "", "duplicate", "fraudulent", "requested_by_customer", "abandoned":
	default:
		return invalidRequest("parameter_invalid", "cancellation_reason", "Invalid cancellation_reason: "+reason)
	}
	id := c.Param("id")
	a, replayed, err := p.idempotent(c, form, func(ctx context.Context, tx storeTx) (answer, error) {
		in, err := tx.lockIntent(ctx, id)
		if errors.Is(err, errNotFound) {
			return answer{}, missing("intent", "payment_intent", id)
		}
		if err != nil {
			return answer{}, fmt.Errorf("read intent: %w", err)
		}
		in, events, err := moveOn(ctx, tx, in, nil)
		if err != nil {
			return answer{}, err
		}
		// Stripe cancels a processing intent only "in rare cases": the
		// fake never does, so a caller must cope with the refusal.
		if in.Status == StatusSucceeded || in.Status == StatusCanceled || in.Status == StatusProcessing {
			a := unexpectedState(in, "cancel")
			a.events = events
			return a, nil
		}
		now := time.Now().Unix()
		in.Status, in.CanceledAt = StatusCanceled, &now
		if reason != "" {
			in.CancellationReason = &reason
		}
		if err := tx.saveIntent(ctx, in); err != nil {
			return answer{}, err
		}
		return answer{status: http.StatusOK, body: in.JSON(), save: true,
			events: append(events, event{typ: "payment_intent.canceled", object: in.JSON()})}, nil
	})
	if err != nil {
		return err
	}
	if !replayed {
		p.hooks.send(c.Request().Context(), a.events)
	}
	return reply(c, a)
}

// retrieveIntent serves GET /v1/payment_intents/:id. A processing intent
// whose time has come moves on first: the read shows it as it is now.
func (p *Provider) retrieveIntent(c echo.Context) error {
	ctx := c.Request().Context()
	in, err := p.Intent(ctx, c.Param("id"))
	if err == nil && in.Status == StatusProcessing {
		in, err = p.advance(ctx, in.ID, nil)
	}
	if errors.Is(err, errNotFound) {
		return missing("intent", "payment_intent", c.Param("id"))
	}
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, in.JSON())
}

// Intent returns the PaymentIntent id, or errNotFound.
func (p *Provider) Intent(ctx context.Context, id string) (Intent, error) {
	return p.store.intent(ctx, id)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal: %v", err))
	}
	return b
}

// inject answers with the 500 of fault f.
func (p *Provider) inject(ctx context.Context, f Fault) error {
	p.log.InfoContext(ctx, "fakestripe: injected fault", "fault", f.String())
	return &apiError{Status: http.StatusInternalServerError, Type: typeAPI, Message: "Injected fault: " + f.String() + "."}
}

// sleep waits d, or less if ctx ends first, in which case it returns ctx's
// error.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
