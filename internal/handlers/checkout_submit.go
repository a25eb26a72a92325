package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/checkout"
	"exactlyonce/internal/web"
)

const (
	// holdFor is how long a second submit waits for the attempt already
	// running before it answers with the processing page. It covers a
	// usual provider call, so a double-click ends on the receipt with no
	// page in between, and stays far below the time a browser or a proxy
	// gives a request.
	holdFor = 3 * time.Second
	// claimTimeout bounds what Place does before it owns the key (pricing
	// and the claim), which runs detached from the request (see place).
	claimTimeout = 15 * time.Second
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
	res, joined, err := h.placeFromPage(c.Request().Context(), a)
	// The same form again, with the same key: what the page offers when
	// the card is refused or the payment's outcome is not known.
	ans, err := h.answerOf(c.Request().Context(), id, sub.retryForm(csrfToken(c)), res, joined, err)
	if err != nil {
		return err
	}
	return send(c, ans)
}

// placeFromPage places the order. When another attempt holds the key —
// the first submit of a double-click — it waits for that attempt's outcome
// (joined) and answers with it; past holdFor it gives up with
// errStillRunning, and the processing page keeps waiting without holding a
// request open.
func (h *Handler) placeFromPage(ctx context.Context, a checkout.Attempt) (res checkout.Result, joined bool, err error) {
	deadline := time.Now().Add(holdFor)
	for {
		res, err := h.place(ctx, a)
		var inProgress *checkout.InProgressError
		if !errors.As(err, &inProgress) && !errors.Is(err, checkout.ErrLockLost) {
			return res, joined, err
		}
		if !joined {
			leave, ok := h.joinWaiters(a)
			if !ok {
				return res, joined, errStillRunning
			}
			defer leave()
		}
		joined = true
		if !h.checkout.Await(ctx, a.CustomerID, a.Key, deadline) {
			return res, joined, errStillRunning
		}
	}
}

// place runs one attempt detached from the request's cancellation. A
// double-click makes the browser drop the first request for the second; the
// first must still claim its key and go on, or the second would find the
// key claimed by an attempt that stopped, and wait out its lock.
func (h *Handler) place(ctx context.Context, a checkout.Attempt) (checkout.Result, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	return h.checkout.Place(ctx, a)
}
