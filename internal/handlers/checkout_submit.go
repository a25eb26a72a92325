package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/checkout"
	"exactlyonce/internal/formkey"
	"exactlyonce/internal/web"
	"exactlyonce/views"
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
	// The same form again, with the same key: what the page offers when
	// the card is refused or the payment's outcome is not known.
	retry := sub.retryForm(csrfToken(c))
	if problem := sub.cardProblem(); problem != "" {
		// Priced only to show the form again; nothing is placed.
		priced, err := h.catalog.Price(c.Request().Context(), sub.items)
		if err != nil {
			return err
		}
		retry.CardError = problem
		return renderCheckout(c, http.StatusBadRequest, priced, retry)
	}
	fp, accept, err := sub.fingerprint()
	if err != nil {
		return err
	}
	return h.placeFromPage(c, retry, checkout.Attempt{
		CustomerID: id, Key: sub.key, Fingerprint: fp, AcceptFingerprints: accept,
		Order:          checkout.Order{Items: sub.items, Card: sub.card},
		Cart:           &checkout.CartVersion{ID: sub.cartID, Version: sub.version},
		ExpectedAmount: sub.amount,
	})
}

// checkFormKey refuses a key this server did not mint for this shopper, or
// minted too long ago for its stored answer to be trusted to still exist.
func (h *Handler) checkFormKey(id uuid.UUID, sub submission) error {
	err := h.formKeys.Check(id, sub.key, sub.sig, sub.binding(), time.Now())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, formkey.ErrMissing):
		return &web.PageError{Status: http.StatusBadRequest, Title: "Form incomplete",
			Message: "This checkout form arrived without its order key, so nothing was charged. Start a new checkout.",
			Action:  web.NewCheckout, Err: err}
	case errors.Is(err, formkey.ErrExpired):
		return &web.PageError{Status: http.StatusBadRequest, Title: "This checkout form has expired",
			Message: fmt.Sprintf("Checkout forms are valid for %s, so this one was refused and nothing was charged. If you paid with it earlier, your order is in your orders.", h.formKeys.TTL()),
			Action:  views.Link{Href: "/orders", Label: "See your orders"}, Err: err}
	default:
		return &web.PageError{Status: http.StatusForbidden, Title: "This form cannot be used",
			Message: "This checkout form was not made for your session (for instance, it comes from another browser), or its order or total was changed after it was shown. Nothing was charged.",
			Action:  web.NewCheckout, Err: err}
	}
}

// placeFromPage places the order and answers the browser. When another
// attempt holds the key — the first submit of a double-click — it waits for
// that attempt's outcome and answers with it; past holdFor it answers with
// the processing page, which keeps waiting without holding a request open.
func (h *Handler) placeFromPage(c echo.Context, retry views.CheckoutForm, a checkout.Attempt) error {
	deadline := time.Now().Add(holdFor)
	joined := false
	for {
		res, err := h.place(c.Request().Context(), a)
		var inProgress *checkout.InProgressError
		if !errors.As(err, &inProgress) && !errors.Is(err, checkout.ErrLockLost) {
			return h.answerAttempt(c, a.CustomerID, retry, res, err, joined)
		}
		if !joined {
			leave, ok := h.joinWaiters(a)
			if !ok {
				return renderProcessing(c, a.Key, nil)
			}
			defer leave()
		}
		joined = true
		if !h.checkout.Await(c.Request().Context(), a.CustomerID, a.Key, deadline) {
			return renderProcessing(c, a.Key, nil)
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

// answerAttempt turns the engine's answer into a page. Errors that are not
// an outcome of the order (a changed form, an invalid cart) go to the error
// handler.
func (h *Handler) answerAttempt(c echo.Context, id uuid.UUID, retry views.CheckoutForm, res checkout.Result, err error, joined bool) error {
	var (
		unknown   *checkout.OutcomeUnknownError
		abandoned *checkout.AbandonedError
		ordered   *checkout.CartOrderedError
	)
	switch {
	case err == nil:
		return h.answerResult(c, res, joined)
	case errors.As(err, &ordered):
		// The cart was ordered under another key (a form of an older
		// render): that order is this form's answer.
		return web.SeeOther(c, "/orders/"+ordered.OrderID.String()+"?replayed=1")
	case errors.Is(err, checkout.ErrCartChanged):
		return h.cartChanged(c, id)
	case errors.As(err, &unknown), errors.As(err, &abandoned):
		// The payment's outcome is not known (the provider failed, or the
		// server is stopping): the same form again resumes it.
		f := web.Classify(err)
		return renderOutage(c, f.Kind.Status, f.RetryAfter, retry)
	}
	return err
}

// answerResult answers a stored outcome: a placed order with 303 to its
// receipt (post/redirect/get), a declined payment with its page.
//
// joined means this request did not place the order but waited for the
// attempt that did, as the second submit of a double-click does: the
// shopper asked once, so the receipt carries no "already placed" note.
func (h *Handler) answerResult(c echo.Context, res checkout.Result, joined bool) error {
	note := res.Replayed && !joined
	switch res.Status {
	case http.StatusCreated:
		receipt, err := res.Receipt()
		if err != nil {
			return fmt.Errorf("decode stored receipt: %w", err)
		}
		target := "/orders/" + receipt.OrderID.String()
		if note {
			target += "?replayed=1"
		}
		return web.SeeOther(c, target)
	case http.StatusPaymentRequired:
		if !res.Replayed {
			web.MarkDecline(c)
		}
		return renderDeclined(c, res.Body, note)
	}
	return fmt.Errorf("stored result with unexpected status %d", res.Status)
}

// cartChanged answers a form for a version of the cart that is no longer
// its own: nothing was charged, and the page shows the cart as it is now
// with a fresh form (its version's key).
func (h *Handler) cartChanged(c echo.Context, id uuid.UUID) error {
	page, ok, err := h.freshCheckout(c, id)
	if err != nil {
		return err
	}
	if !ok {
		return &web.PageError{Status: http.StatusConflict, Title: "Your cart changed",
			Message: "Your cart changed since this checkout page was opened, and it is empty now, so nothing was charged.",
			Action:  web.BackToCart, Err: checkout.ErrCartChanged}
	}
	page.CartChanged = true
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return web.Render(c, http.StatusConflict, views.Checkout(page))
}

// renderProcessing is the page of a submit that found its order still
// running. It reloads /checkout/status by meta refresh, with no script.
func renderProcessing(c echo.Context, key string, retry *views.CheckoutForm) error {
	return web.Render(c, http.StatusAccepted, views.Processing(views.ProcessingPage{
		StatusURL:      "/checkout/status?key=" + url.QueryEscape(key),
		RefreshSeconds: 1,
		Retry:          retry,
	}))
}

// renderOutage is the page of a payment whose outcome is unknown, with a
// form that retries it under the same key.
func renderOutage(c echo.Context, status int, retryAfter time.Duration, retry views.CheckoutForm) error {
	c.Response().Header().Set("Retry-After", strconv.Itoa(web.RetryAfterSeconds(retryAfter)))
	return web.Render(c, status, views.Outage(views.OutagePage{
		RetryAfterSeconds: web.RetryAfterSeconds(retryAfter),
		Retry:             retry,
	}))
}
