package handlers

import (
	"errors"

	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// checkoutStatus is GET /checkout/status?key=…, where the processing page
// refreshes to: the receipt once the order is placed, the declined page if
// it was declined, the processing page again while it runs. It reads the
// key scoped to the shopper, so another shopper's key is not found and
// reveals nothing.
func (h *Handler) checkoutStatus(c echo.Context) error {
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
		ans, err := resultAnswer(state.Result)
		if err != nil {
			return err
		}
		return send(c, ans)
	}
	if state.Held {
		return send(c, processingAnswer(key, nil))
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
		return send(c, processingAnswer(key, nil))
	}
	priced, err := h.catalog.Price(ctx, open.Items)
	if err != nil {
		return err
	}
	retry := h.payForm(id, csrfToken(c), key, open.ID, open.Version, open.Items, priced).form
	return send(c, processingAnswer(key, &retry))
}
