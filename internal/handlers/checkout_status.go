package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// checkoutReturn is GET /checkout/return?key=…, where the shopper's bank
// sends them back after 3-D Secure (with payment_intent and
// redirect_status, which it does not trust: a shopper may type them). The
// order is settled now by its payment as the provider has it, under a lock
// of its own, exactly as the completer settles a key: the order if it was
// paid, the decline if the authentication failed, nothing while the
// shopper may still be at their bank; then the page is the status page's.
// Refreshed, followed twice or opened in another tab, it settles nothing
// twice: a settled key is finished, and its answer is replayed (and says
// so; the return that settled it does not).
func (h *Handler) checkoutReturn(c echo.Context) error {
	id, ok := shopper(c)
	key := c.QueryParam("key")
	if !ok || idem.CheckKey(key) != nil {
		return web.Fail(problem.NotFound, "no such order in progress")
	}
	outcome, err := h.settle(c.Request().Context(), id, key)
	switch {
	case err == nil, errors.Is(err, idem.ErrNotFound), errors.Is(err, idem.ErrInProgress):
	default:
		// The status page says what is known; the completer tries again.
		h.log.WarnContext(c.Request().Context(), "settle the order on the return from the bank", "outcome", outcome, "err", err)
	}
	return h.statusPage(c, err == nil && checkout.Settled(outcome))
}

// checkoutStatus is GET /checkout/status?key=…, where the processing page
// refreshes to: the receipt once the order is placed, the declined page if
// it was declined, the processing page again while it runs. It reads the
// key scoped to the shopper, so another shopper's key is not found and
// reveals nothing.
func (h *Handler) checkoutStatus(c echo.Context) error { return h.statusPage(c, false) }

// statusPage is the status page; settledNow says this very request
// finished the key, so its answer is not a replay.
func (h *Handler) statusPage(c echo.Context, settledNow bool) error {
	id, ok := shopper(c)
	key := c.QueryParam("key")
	// A key no form could have carried (empty, NUL, not ASCII) names no
	// order; refused here, it never reaches PostgreSQL, which rejects NUL
	// and invalid UTF-8 in text with an error.
	if !ok || idem.CheckKey(key) != nil {
		return web.Fail(problem.NotFound, "no such order in progress")
	}
	ctx := c.Request().Context()
	state, err := h.checkout.State(ctx, id, key)
	if errors.Is(err, checkout.ErrNoSuchKey) {
		return web.Fail(problem.NotFound, "no such order in progress")
	}
	if err != nil {
		return err
	}
	if state.Finished {
		// Replayed (the cart is not touched again) and joined (the shopper
		// sent the order once; no "already placed" note).
		state.Result.Joined = true
		state.Result.Replayed = !settledNow
		ans, err := resultAnswer(state.Result)
		if err != nil {
			return err
		}
		// A decline (the bank's authentication failed) is shown in a new
		// form, as the submit shows it.
		if ans, err = h.declinedInForm(ctx, id, csrfToken(c), ans); err != nil {
			return err
		}
		return h.send(c, ans)
	}
	if state.Held {
		return h.send(c, processingAnswer(key, nil))
	}
	if state.AuthenticateURL != "" {
		// Back on the shop without having confirmed at the bank (its
		// page's Back, a bookmark): the way to the bank again. Nothing
		// else is offered: the form again would send the same payment.
		return h.send(c, answer{status: http.StatusAccepted,
			page: views.OrderAnswer{Authenticate: &views.AuthenticatePage{URL: state.AuthenticateURL, Waiting: true}}})
	}
	// Nobody holds the order any more: the attempt stopped without an
	// answer (the provider failed, the server restarted) and no retry has
	// come. The completer will settle it in time; meanwhile the shopper may
	// resume it, under the same key, with the cart as it is now (if that is
	// not what the key was used for, the engine refuses it).
	open, ok, err := h.carts.Browser(ctx, id)
	if err != nil {
		return err
	}
	if !ok || len(open.Items) == 0 {
		return h.send(c, processingAnswer(key, nil))
	}
	priced, err := h.catalog.Price(ctx, open.Items)
	if err != nil {
		return err
	}
	retry := h.payForm(id, csrfToken(c), key, open.ID, open.Version, open.Items, priced).form
	return h.send(c, processingAnswer(key, &retry))
}
