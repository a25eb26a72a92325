package api

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

func (h *Handler) getProviderBehaviour(c echo.Context) error {
	return c.JSON(http.StatusOK, h.provider.Behaviour())
}

// setProviderBehaviour is PUT /api/demo/provider, body {"delay_ms": 0,
// "fail": "none"}: the fault the fake provider injects into the following
// charges. Setting it twice is the same as setting it once, so it needs no
// idempotency key.
func (h *Handler) setProviderBehaviour(c echo.Context) error {
	body, err := web.ReadBody(c)
	if err != nil {
		return err
	}
	var b fakestripe.Behaviour
	if err := web.DecodeStrict(body, &b); err != nil {
		return err
	}
	if err := h.provider.SetBehaviour(b); err != nil {
		return web.Fail(problem.InvalidRequest, err.Error())
	}
	return c.JSON(http.StatusOK, h.provider.Behaviour())
}

// demoStats is GET /api/demo/stats: totals that let a demo (or a test from
// outside) check that N attempts made one charge and one order.
func (h *Handler) demoStats(c echo.Context) error {
	s, err := h.db.DemoStats(c.Request().Context())
	if err != nil {
		return fmt.Errorf("demo stats: %w", err)
	}
	charges, err := h.provider.Succeeded(c.Request().Context())
	if err != nil {
		return fmt.Errorf("demo stats: %w", err)
	}
	return c.JSON(http.StatusOK, map[string]int64{
		"charges": charges, "orders": s.Orders, "keys_started": s.KeysStarted, "keys_finished": s.KeysFinished,
		"keys_parked": s.KeysParked, "refunds": s.Refunds,
	})
}
