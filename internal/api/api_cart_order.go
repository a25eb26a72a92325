package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/cart"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// cartOrderRoute is fingerprinted with every order of a cart, so that a key
// first used here cannot be replayed by another endpoint.
const cartOrderRoute = "/api/carts/{id}/order"

// cartOrderRequest is the optional body of an order of a cart.
type cartOrderRequest struct {
	Card string `json:"card,omitempty"`
	// ReturnURL is as an order's (orderRequest.ReturnURL).
	ReturnURL string `json:"return_url,omitempty"`
}

// orderCart is POST /api/carts/{id}/order: it places the cart's current
// version through the same engine as POST /api/orders. The Idempotency-Key
// is optional: without one the key is derived from the cart and its
// version, so a client that lost its key and retries gets the one order.
// If-Match, when sent, must name the current version (412 otherwise).
func (h *Handler) orderCart(c echo.Context) error {
	id, err := cartID(c)
	if err != nil {
		return err
	}
	var key string
	if values := c.Request().Header.Values("Idempotency-Key"); len(values) > 0 {
		if key, err = parseIdempotencyKey(values); err != nil {
			return err
		}
	}
	body, err := web.ReadBody(c)
	if err != nil {
		return err
	}
	var req cartOrderRequest
	if len(body) > 0 {
		if err := web.DecodeStrict(body, &req); err != nil {
			return err
		}
	}
	if err := checkReturnURL(req.ReturnURL); err != nil {
		return err
	}
	ctx := c.Request().Context()
	ct, err := h.carts.Get(ctx, customerID(c), id)
	if err != nil {
		return err
	}
	ifMatchHeader := c.Request().Header.Get("If-Match")
	matched, err := ifMatch(ifMatchHeader, ct.Version)
	if err != nil {
		return err
	}
	if !matched {
		// A key in use is judged by what it was claimed for: a retry of an
		// order whose cart changed meanwhile gets that order, not a 412.
		inUse := false
		if key != "" {
			if inUse, err = h.checkout.KeyInUse(ctx, customerID(c), key); err != nil {
				return err
			}
		}
		if !inUse {
			return web.Fail(problem.CartVersionMismatch, "the cart is at version "+strconv.FormatInt(ct.Version, 10))
		}
	}
	if key == "" {
		key = derivedCartKey(ct)
	}
	req.Card = orderCard(req.Card)
	fp, err := cartOrderFingerprint(ct, req.Card, ifMatchHeader, req.ReturnURL)
	if err != nil {
		return err
	}
	wait := applyWait(c.Request().Header, c.Response().Header())
	res, err := h.checkout.PlaceOrAwait(ctx, checkout.Attempt{
		CustomerID: customerID(c), Key: key, Fingerprint: fp,
		Order: checkout.Order{Items: ct.Items, Card: req.Card}, ReturnURL: req.ReturnURL,
		Cart: &checkout.CartVersion{ID: ct.ID, Version: ct.Version},
	}, wait)
	var authn *checkout.AuthenticationRequiredError
	if errors.As(err, &authn) {
		return writeAuthenticationRequired(c, authn, req.ReturnURL)
	}
	if err != nil {
		return err
	}
	return writeResult(c, res)
}

// derivedCartKey is the key of an order of a cart sent without one: one per
// cart version, so every retry of the same order is the same operation.
func derivedCartKey(ct cart.Cart) string {
	return "cart:" + ct.ID.String() + ":v" + strconv.FormatInt(ct.Version, 10)
}

// cartOrderFingerprint identifies an order of a cart as the client sent it:
// the cart, the card's last four digits and the If-Match header. Not the
// cart's version: a request sent again byte for byte is the same request
// whatever became of the cart meanwhile, so a retry of an order whose
// outcome was lost, after the cart was edited, waits for that order (409)
// and then gets it, never 422. What the key pays for is the version it was
// claimed with (the engine resumes the order priced then).
func cartOrderFingerprint(ct cart.Cart, card, ifMatch, returnURL string) ([]byte, error) {
	body, err := json.Marshal(struct {
		CardLast4 string    `json:"card_last4"`
		CartID    uuid.UUID `json:"cart_id"`
		IfMatch   string    `json:"if_match"`
		ReturnURL string    `json:"return_url,omitempty"` // left out when empty, as before it existed
	}{card[max(0, len(card)-4):], ct.ID, ifMatch, returnURL})
	if err != nil {
		return nil, fmt.Errorf("encode cart order: %w", err)
	}
	return checkout.Fingerprint(http.MethodPost, cartOrderRoute, body), nil
}

// ifMatch reports whether an If-Match header admits version: absent or
// "*" admits any; otherwise one of its entity tags ("3", W/"3" or a bare
// 3) must be the version.
func ifMatch(header string, version int64) (bool, error) {
	header = strings.TrimSpace(header)
	if header == "" || header == "*" {
		return true, nil
	}
	want := strconv.FormatInt(version, 10)
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if unq, err := strconv.Unquote(tag); err == nil {
			tag = unq
		}
		if _, err := strconv.ParseInt(tag, 10, 64); err != nil {
			return false, web.Fail(problem.InvalidRequest, "If-Match must name cart versions, such as \"3\"")
		}
		if tag == want {
			return true, nil
		}
	}
	return false, nil
}
