package api

import (
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

const maxNameLength = 100

// createCustomer registers a shopper and returns its bearer token, the only
// time the token is ever shown: the database keeps only its hash.
func (h *Handler) createCustomer(c echo.Context) error {
	var req struct {
		Name string `json:"name"`
	}
	body, err := web.ReadBody(c)
	if err != nil {
		return err
	}
	if len(body) > 0 {
		if err := web.DecodeStrict(body, &req); err != nil {
			return err
		}
	}
	if utf8.RuneCountInString(req.Name) > maxNameLength {
		return web.Fail(problem.InvalidRequest, fmt.Sprintf("name must be at most %d characters", maxNameLength))
	}
	// PostgreSQL text cannot hold NUL, and no name needs a control
	// character; invalid UTF-8 is refused by decodeStrict.
	if strings.ContainsFunc(req.Name, unicode.IsControl) {
		return web.Fail(problem.InvalidRequest, "name must not contain control characters")
	}
	// Nor a bidirectional control (U+202E and its kin, format characters
	// IsControl misses): it reorders what an operator's screen or a log
	// line shows after it.
	if strings.ContainsFunc(req.Name, func(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }) {
		return web.Fail(problem.InvalidRequest, "name must not contain bidirectional controls (such as U+202E)")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return fmt.Errorf("customer id: %w", err)
	}
	if err := h.limits.AllowNewCustomer(c); err != nil {
		return err
	}
	token, hash := newToken()
	err = h.db.CreateCustomer(c.Request().Context(), db.CreateCustomerParams{ID: id, Name: req.Name, TokenHash: hash})
	if err != nil {
		return fmt.Errorf("create customer: %w", err)
	}
	// The token is shown once: no cache on the way may keep a copy.
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	return c.JSON(http.StatusCreated, map[string]string{"id": id.String(), "token": token})
}
