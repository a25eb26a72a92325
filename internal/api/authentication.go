package api

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// maxReturnURL bounds an order's return_url, as Stripe bounds it.
const maxReturnURL = 2048

// checkReturnURL refuses a return_url that is not an absolute http(s) URL,
// before the claim (a 400 stores nothing): the provider would refuse it
// only after the order had been claimed and its intent created.
func checkReturnURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(raw) > maxReturnURL {
		const reason = "return_url must be an absolute http or https URL of at most 2048 bytes"
		return &web.Failure{Kind: problem.InvalidRequest, Detail: reason, Errors: problem.At("/return_url", reason)}
	}
	return nil
}

// authenticationRequired is the answer to an order whose payment the card
// holder must authenticate with their bank first (3-D Secure), as Stripe
// shows a PaymentIntent that requires action: send the card holder to
// next_action.redirect_to_url.url; the bank sends them back to return_url.
type authenticationRequired struct {
	Status        string     `json:"status"` // requires_action
	PaymentIntent string     `json:"payment_intent"`
	NextAction    nextAction `json:"next_action"`
}

type nextAction struct {
	Type          string        `json:"type"` // redirect_to_url
	RedirectToURL redirectToURL `json:"redirect_to_url"`
}

type redirectToURL struct {
	URL       string `json:"url"`
	ReturnURL string `json:"return_url"`
}

// writeAuthenticationRequired answers 202 Accepted: the order is neither
// placed nor refused, and nothing is stored for the key. Sending the same
// request again (the same key) asks how it stands: this 202 again while the
// card holder has not authenticated, then the stored 201 (paid) or 402
// (authentication failed, or abandoned past the authentication window), as
// the card holder's return, the provider's webhook or the completer
// settled it. Not a 402: a 402 of this API is stored and final.
func writeAuthenticationRequired(c echo.Context, authn *checkout.AuthenticationRequiredError, returnURL string) error {
	return c.JSON(http.StatusAccepted, authenticationRequired{Status: "requires_action", PaymentIntent: authn.IntentID,
		NextAction: nextAction{Type: "redirect_to_url", RedirectToURL: redirectToURL{URL: authn.URL, ReturnURL: returnURL}}})
}
