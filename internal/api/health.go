package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// healthz is GET /healthz: the process is up and serving. It checks nothing
// else, so a database outage does not get every instance restarted.
//
// GET /readyz, whether the instance can take traffic, is
// internal/readiness's report.
func (h *Handler) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}
