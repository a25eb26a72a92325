package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/cart"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/problem"
)

// cartOrderRoute is fingerprinted with every order of a cart, so that a key
// first used here cannot be replayed by another endpoint.
const cartOrderRoute = "/api/carts/{id}/order"

// cartView is a cart as the API shows it. Its version is also its ETag.
type cartView struct {
	ID      uuid.UUID      `json:"id"`
	Version int64          `json:"version"`
	Status  string         `json:"status"` // "open" or "ordered"
	OrderID *uuid.UUID     `json:"order_id,omitempty"`
	Items   []catalog.Item `json:"items"`
}

// writeCart answers with a cart and its version as ETag.
func writeCart(c echo.Context, status int, ct cart.Cart) error {
	v := cartView{ID: ct.ID, Version: ct.Version, Status: "open", OrderID: ct.OrderID, Items: ct.Items}
	if ct.OrderID != nil {
		v.Status = "ordered"
	}
	c.Response().Header().Set("ETag", strconv.Quote(strconv.FormatInt(ct.Version, 10)))
	return c.JSON(status, v)
}

// cartID reads the cart id of the path. Carts are named by UUIDs the client
// chooses; anything else names no cart.
func cartID(c echo.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return uuid.Nil, newAPIError(problem.NotFound, "no such cart: a cart id is a UUID")
	}
	return id, nil
}

// getCart is GET /api/carts/{id}: the caller's cart, with its version.
func (h *Handler) getCart(c echo.Context) error {
	id, err := cartID(c)
	if err != nil {
		return err
	}
	ct, err := h.carts.Get(c.Request().Context(), customerID(c), id)
	if err != nil {
		return err
	}
	return writeCart(c, http.StatusOK, ct)
}

// putCart is PUT /api/carts/{id} with {"items":[…]}: it creates the cart
// under the client's id or replaces its lines. Repeating it changes
// nothing, the version included; it needs no Idempotency-Key.
func (h *Handler) putCart(c echo.Context) error {
	id, err := cartID(c)
	if err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	var req struct {
		Items *[]catalog.Item `json:"items"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	if req.Items == nil {
		return newAPIError(problem.InvalidRequest, `the body must name the cart's "items" (an empty list empties it)`)
	}
	ct, err := h.carts.Replace(c.Request().Context(), customerID(c), id, *req.Items)
	if err != nil {
		return err
	}
	return writeCart(c, http.StatusOK, ct)
}

// putCartItem is PUT /api/carts/{id}/items/{sku} with {"quantity": n}: it
// sets one line, and removes it at 0.
func (h *Handler) putCartItem(c echo.Context) error {
	id, err := cartID(c)
	if err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	var req struct {
		Quantity *int `json:"quantity"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	if req.Quantity == nil {
		return newAPIError(problem.InvalidRequest, `the body must name the line's "quantity"`)
	}
	ct, err := h.carts.SetLine(c.Request().Context(), customerID(c), id, c.Param("sku"), *req.Quantity)
	if err != nil {
		return err
	}
	return writeCart(c, http.StatusOK, ct)
}

// deleteCartItem is DELETE /api/carts/{id}/items/{sku}: 204 whether or not
// the line was there, so a repeated DELETE answers as the first did.
func (h *Handler) deleteCartItem(c echo.Context) error {
	id, err := cartID(c)
	if err != nil {
		return err
	}
	if _, err := h.carts.SetLine(c.Request().Context(), customerID(c), id, c.Param("sku"), 0); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// cartOrderRequest is the optional body of an order of a cart.
type cartOrderRequest struct {
	Card string `json:"card,omitempty"`
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
	body, err := readBody(c)
	if err != nil {
		return err
	}
	var req cartOrderRequest
	if len(body) > 0 {
		if err := decodeStrict(body, &req); err != nil {
			return err
		}
	}
	ctx := c.Request().Context()
	ct, err := h.carts.Get(ctx, customerID(c), id)
	if err != nil {
		return err
	}
	matched, err := ifMatch(c.Request().Header.Get("If-Match"), ct.Version)
	if err != nil {
		return err
	}
	if !matched {
		return newAPIError(problem.CartVersionMismatch, "the cart is at version "+strconv.FormatInt(ct.Version, 10))
	}
	if key == "" {
		key = derivedCartKey(ct)
	}
	if req.Card == "" {
		req.Card = defaultCard
	}
	fp, err := cartOrderFingerprint(ct, req.Card)
	if err != nil {
		return err
	}
	lockFor, err := h.demoLockFor(c)
	if err != nil {
		return err
	}
	res, err := h.checkout.Place(ctx, checkout.Attempt{
		CustomerID: customerID(c), Key: key, Fingerprint: fp, LockFor: lockFor,
		Order: checkout.Order{Items: ct.Items, Card: req.Card},
		Cart:  &checkout.CartVersion{ID: ct.ID, Version: ct.Version},
	})
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

// cartOrderFingerprint identifies an order of a cart: the cart version and
// the card (of which the fingerprint keeps the last four digits).
func cartOrderFingerprint(ct cart.Cart, card string) ([]byte, error) {
	body, err := json.Marshal(map[string]any{"cart_id": ct.ID, "cart_version": ct.Version, "card": card})
	if err != nil {
		return nil, fmt.Errorf("encode cart order: %w", err)
	}
	return checkout.Fingerprint(http.MethodPost, cartOrderRoute, body)
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
			return false, newAPIError(problem.InvalidRequest, "If-Match must name cart versions, such as \"3\"")
		}
		if tag == want {
			return true, nil
		}
	}
	return false, nil
}
