package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

func (h *Handler) listProducts(c echo.Context) error {
	products, err := h.catalog.Products(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, products)
}
