package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/database"
)

// readyTimeout bounds a readiness check: a probe that hangs is worse than
// one that says no.
const readyTimeout = 2 * time.Second

// healthz is GET /healthz: the process is up and serving. It checks nothing
// else, so a database outage does not get every instance restarted.
func (h *Handler) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is GET /readyz: the database answers and every migration this
// binary brings is applied, so the instance can take traffic.
func (h *Handler) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	err := h.db.Ready(ctx)
	if err == nil {
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	}
	reason := "database unreachable"
	if errors.Is(err, database.ErrMigrationsPending) {
		reason = "migrations pending"
	}
	h.log.WarnContext(c.Request().Context(), "not ready", "reason", reason, "err", err)
	return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": reason})
}
