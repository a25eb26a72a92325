package handlers

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/checkout"
	"exactlyonce/internal/web"
)

var sessionEnded = &web.PageError{Status: http.StatusForbidden, Title: "Your session has ended",
	Message: "This checkout form belongs to a session your browser no longer has, so nothing was charged. Your cart may be empty now; start again from the shop.",
	Action:  web.BackToShop}

// submitCheckout is POST /checkout: the browser's way into the same claim →
// provider → finish engine as the API, scoped to the shopper. Every way of
// sending one cart version twice ends on its one order: the second submit of
// a double-click waits for the first, a refresh, Back-and-Pay or a second tab
// (the same key: it is the cart version's) replays it, a changed form is
// refused, and a form for an older version of the cart is answered with the
// cart as it is now.
func (h *Handler) submitCheckout(c echo.Context) error {
	id, ok := shopper(c)
	if !ok {
		return sessionEnded
	}
	csrf := csrfToken(c)
	sub, err := readSubmission(c)
	if err != nil {
		return err
	}
	if err := h.checkFormKey(id, sub); err != nil {
		return err
	}
	a, err := sub.attempt(id)
	if err != nil {
		return err
	}
	a.ReturnURL = returnURL(c, a.Key)
	// The second submit of a double-click waits for the first, as long as
	// a usual payment takes; past that the processing page waits for it
	// by refreshing, without holding a request open.
	res, err := h.checkout.PlaceOrAwait(c.Request().Context(), a, checkout.MaxWait)
	// The same form again, with the same key: what the page offers when
	// the card is refused or the payment's outcome is not known.
	ans, err := h.answerOf(c.Request().Context(), id, sub.retryForm(csrf), res, err)
	if err != nil {
		return err
	}
	return h.send(c, ans)
}

// returnURL is where the shopper's bank sends them back after 3-D Secure:
// this shop's /checkout/return, on the host the shopper reached (the Host
// allow-list has vouched for it), naming the order's key.
func returnURL(c echo.Context, key string) string {
	return c.Scheme() + "://" + c.Request().Host + "/checkout/return?" + url.Values{"key": {key}}.Encode()
}
