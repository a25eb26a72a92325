package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// getMe is GET /api/customers/me: who the token belongs to, and their
// loyalty points, summed over the ledger.
func (h *Handler) getMe(c echo.Context) error {
	id := customerID(c)
	points, err := h.db.PointsBalance(c.Request().Context(), id)
	if err != nil {
		return fmt.Errorf("points balance: %w", err)
	}
	return c.JSON(http.StatusOK, struct {
		ID     string `json:"id"`
		Points int64  `json:"points"`
	}{ID: id.String(), Points: points})
}
