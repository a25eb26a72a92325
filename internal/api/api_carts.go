package api

import (
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/cart"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

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
		return uuid.Nil, web.Fail(problem.NotFound, "no such cart: a cart id is a UUID")
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
	body, err := web.ReadBody(c)
	if err != nil {
		return err
	}
	var req struct {
		Items *[]catalog.Item `json:"items"`
	}
	if err := web.DecodeStrict(body, &req); err != nil {
		return err
	}
	if req.Items == nil {
		return web.Fail(problem.InvalidRequest, `the body must name the cart's "items" (an empty list empties it)`)
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
	body, err := web.ReadBody(c)
	if err != nil {
		return err
	}
	var req struct {
		Quantity *int `json:"quantity"`
	}
	if err := web.DecodeStrict(body, &req); err != nil {
		return err
	}
	if req.Quantity == nil {
		return web.Fail(problem.InvalidRequest, `the body must name the line's "quantity"`)
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
