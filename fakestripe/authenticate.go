package fakestripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// The bank's side of 3-D Secure, as Stripe's test mode shows it: a confirm
// that passes return_url with a card that asks for authentication leaves
// the intent requires_action with next_action.redirect_to_url, whose url is
// this page. The shopper completes or fails the authentication there, and
// the page sends them back to return_url with ?payment_intent=…&
// payment_intent_client_secret=…&redirect_status=succeeded|failed, as
// Stripe does, after the intent has moved on (succeeded with its charge, or
// requires_payment_method with last_payment_error) and its webhook has been
// sent. A second completion (a double click, Back and again) changes
// nothing and sends the shopper back the same way: only the first decides.

// authenticatePath is where the page is served, under the fake's root.
const authenticatePath = "/3ds/authenticate/"

// authenticateAt returns where a confirm with returnURL ("" for none) sends
// its shopper to authenticate the intent id (this server's page, as the
// confirm's client reached it), and back: nil, nil without a return_url.
func authenticateAt(c echo.Context, id, returnURL string) (ret, page *string) {
	if returnURL == "" {
		return nil, nil
	}
	at := c.Scheme() + "://" + c.Request().Host + authenticatePath + id
	return &returnURL, &at
}

// RegisterAuthentication mounts the bank's page on g, which must be
// e.Group("/3ds") at the root of the server whose host the confirms
// reached: GET /3ds/authenticate/:id shows it, POST with outcome=complete
// or outcome=fail decides. It takes no secret: it is the shopper's browser
// that comes.
func (p *Provider) RegisterAuthentication(g *echo.Group) {
	g.GET("/authenticate/:id", p.authenticationPage)
	g.POST("/authenticate/:id", p.authenticate3DS)
}

// Mount serves everything the fake has on e: the API under /v1, the
// control API under /provider/demo, the bank's page under /3ds.
func (p *Provider) Mount(e *echo.Echo) {
	p.Register(e.Group("/v1"))
	p.RegisterDemo(e.Group("/provider/demo"))
	p.RegisterAuthentication(e.Group("/3ds"))
}

var authenticationPage = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authenticate your payment · Test bank</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
button{font:inherit;padding:.6rem 1.2rem;margin-right:.5rem}</style></head>
<body><main data-testid="bank">
<p><small>Test bank (the fake Stripe's 3-D Secure page)</small></p>
<h1>Authenticate your payment</h1>
{{if .Waiting}}<p>Confirm the payment of <strong data-testid="amount">{{.Amount}}</strong>{{with .Description}} for {{.}}{{end}}.</p>
<form method="post">
<button type="submit" name="outcome" value="complete" data-testid="complete">Complete</button>
<button type="submit" name="outcome" value="fail" data-testid="fail">Fail</button>
</form>
{{else}}<p data-testid="decided">This payment is {{.Status}}: there is nothing left to authenticate.</p>
{{with .Back}}<p><a href="{{.}}" data-testid="back">Back to the shop</a></p>{{end}}{{end}}
</main></body></html>
`))

// authenticationPage serves the page of the intent :id.
func (p *Provider) authenticationPage(c echo.Context) error {
	in, err := p.Intent(c.Request().Context(), c.Param("id"))
	if errors.Is(err, errNotFound) || err == nil && in.ReturnURL == nil {
		return c.String(http.StatusNotFound, "No payment waits for authentication here.")
	}
	if err != nil {
		return err
	}
	data := struct {
		Waiting                           bool
		Amount, Description, Status, Back string
	}{Waiting: in.Status == StatusRequiresAction, Amount: formatAmount(in.Amount, in.Currency), Status: in.Status}
	if in.Description != nil {
		data.Description = *in.Description
	}
	if !data.Waiting {
		data.Back = backTo(in)
	}
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(http.StatusOK)
	return authenticationPage.Execute(c.Response(), data)
}

// authenticate3DS serves the page's POST: the first one decides the intent
// (outcome=complete: succeeded, with its charge; outcome=fail:
// requires_payment_method with Stripe's authentication failure), and every
// one sends the shopper back to return_url with the intent as it is now.
// Behaviour.Authentication may slow it down, or lose the way back after the
// decision (the shopper never returns; the webhook still goes).
func (p *Provider) authenticate3DS(c echo.Context) error {
	ctx := c.Request().Context()
	outcome := c.FormValue("outcome")
	if outcome != "complete" && outcome != "fail" {
		return c.String(http.StatusBadRequest, "outcome must be complete or fail")
	}
	faults := p.Behaviour().Authentication
	if err := sleep(ctx, faults.Delay); err != nil {
		return fmt.Errorf("delay: %w", err)
	}
	var (
		in     Intent
		events []event
	)
	err := p.store.inTx(context.WithoutCancel(ctx), func(tx storeTx) error {
		var err error
		if in, err = tx.lockIntent(ctx, c.Param("id")); err != nil {
			return err
		}
		if in.Status != StatusRequiresAction || in.ReturnURL == nil {
			return nil // decided already: a second click, or canceled meanwhile
		}
		var a answer
		if outcome == "complete" {
			charge := newID("ch_")
			in.LatestCharge = &charge
			a, err = succeedIntent(ctx, tx, in)
		} else {
			a, err = failAuthentication(ctx, tx, in)
		}
		if err != nil {
			return err
		}
		events = a.events
		in, err = tx.lockIntent(ctx, in.ID)
		return err
	})
	if errors.Is(err, errNotFound) || err == nil && in.ReturnURL == nil {
		return c.String(http.StatusNotFound, "No payment waits for authentication here.")
	}
	if err != nil {
		return err
	}
	p.hooks.send(ctx, events)
	if faults.LoseReturn {
		return c.String(http.StatusBadGateway, "The bank's page lost the way back to the shop.")
	}
	return c.Redirect(http.StatusSeeOther, backTo(in))
}

// failAuthentication is the shopper failing 3-D Secure: the intent is
// requires_payment_method again with Stripe's error, nothing charged.
func failAuthentication(ctx context.Context, tx storeTx, in Intent) (answer, error) {
	failed := &apiError{Status: http.StatusPaymentRequired, Type: typeInvalidRequest, Code: "payment_intent_authentication_failure",
		Message: "The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod " +
			"to attempt to fulfill this PaymentIntent again."}
	lastError, err := json.Marshal(failed)
	if err != nil {
		return answer{}, fmt.Errorf("marshal authentication failure: %w", err)
	}
	in.Status, in.LastPaymentError, in.LatestCharge = StatusRequiresPaymentMethod, lastError, nil
	if err := tx.saveIntent(ctx, in); err != nil {
		return answer{}, err
	}
	return answer{events: []event{{typ: "payment_intent.payment_failed", object: in.JSON()}}}, nil
}

// backTo is the intent's return_url with what Stripe adds to it.
func backTo(in Intent) string {
	if in.ReturnURL == nil {
		return ""
	}
	u, err := url.Parse(*in.ReturnURL)
	if err != nil {
		return *in.ReturnURL // checked when the confirm stored it
	}
	status := "failed"
	switch in.Status {
	case StatusSucceeded:
		status = "succeeded"
	case StatusProcessing:
		status = "processing"
	}
	q := u.Query()
	q.Set("payment_intent", in.ID)
	q.Set("payment_intent_client_secret", in.ID+"_secret_fake")
	q.Set("redirect_status", status)
	u.RawQuery = q.Encode()
	return u.String()
}

// formatAmount shows an amount in minor units as the bank's page does.
func formatAmount(amount int64, currency string) string {
	return fmt.Sprintf("%d.%02d %s", amount/100, amount%100, strings.ToUpper(currency))
}
