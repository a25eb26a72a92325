package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/api"
)

// openAPI is GET /api/openapi.json: the description of this API, embedded
// at build time so it always matches the binary that serves it.
func (h *Handler) openAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, api.OpenAPI)
}
