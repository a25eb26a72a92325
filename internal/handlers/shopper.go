package handlers

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// Where the page middleware leaves what it read from the cookies.
const (
	shopperKey = "shopper_id"
	csrfKey    = "csrf_token"
)

// loadShopper makes the shopper named by a valid session cookie available to
// page handlers. It never creates one: a crawler's GET must not write a row,
// so a shopper comes into being only when it first changes its cart.
func (h *Handler) loadShopper(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if id, ok := h.sessions.Shopper(c.Request()); ok {
			c.Set(shopperKey, id)
		}
		return next(c)
	}
}

// shopper returns the request's shopper, if it has a session.
func shopper(c echo.Context) (uuid.UUID, bool) {
	id, ok := c.Get(shopperKey).(uuid.UUID)
	return id, ok
}

// ensureShopper returns the request's shopper, creating the session and the
// customer row on first need. The row is written even for a known session:
// the insert is idempotent and heals a cookie that outlived its database.
func (h *Handler) ensureShopper(c echo.Context) (uuid.UUID, error) {
	id, ok := shopper(c)
	if !ok {
		if err := h.allowNewCustomer(c); err != nil {
			return uuid.Nil, err
		}
		var err error
		if id, err = uuid.NewV7(); err != nil {
			return uuid.Nil, fmt.Errorf("shopper id: %w", err)
		}
	}
	if err := h.db.EnsureShopper(c.Request().Context(), id); err != nil {
		return uuid.Nil, fmt.Errorf("create shopper: %w", err)
	}
	if !ok {
		if err := h.sessions.SetShopper(c.Response(), c.Request(), id); err != nil {
			return uuid.Nil, err
		}
		c.Set(shopperKey, id)
	}
	return id, nil
}

// csrfToken is the token the page's forms must carry.
func csrfToken(c echo.Context) string {
	token, _ := c.Get(csrfKey).(string)
	return token
}
