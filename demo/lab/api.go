package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// API serves the demo's JSON routes, on a demo server only (the app mounts
// them among the API's with DEMO=1; the API knows nothing of them): the
// fake provider's faults, relayed to its control API, and the totals that
// let a demo, or a test from outside, check that N attempts made one charge
// and one order.
type API struct {
	control Control
	// stats reads the shop's totals.
	stats func(ctx context.Context) (map[string]int64, error)
}

// NewAPI returns the demo's JSON routes over the fake's control.
func NewAPI(control Control, stats func(ctx context.Context) (map[string]int64, error)) *API {
	return &API{control: control, stats: stats}
}

// Register adds the routes to api, the API's route set (problem+json
// errors).
func (a *API) Register(api *web.RouteSet) {
	api.Add(http.MethodGet, "/api/demo/provider", a.getProvider)
	api.Add(http.MethodPut, "/api/demo/provider", a.setProvider)
	api.Add(http.MethodGet, "/api/demo/stats", a.demoStats)
}

// getProvider is GET /api/demo/provider: the fake's behaviour, as its
// control API words it.
func (a *API) getProvider(c echo.Context) error {
	body, err := a.control.relay(c.Request().Context(), http.MethodGet, "/behaviour", nil)
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, body)
}

// setProvider is PUT /api/demo/provider, body {"delay_ms": 0, "fail":
// "none"} (and the fake's other fields: "rates", "webhooks", …): the fault
// the fake injects into the following charges. The fake judges the body;
// what it refuses is a 400 here, with its reason. Setting it twice is the
// same as setting it once, so it needs no idempotency key.
func (a *API) setProvider(c echo.Context) error {
	body, err := web.ReadBody(c)
	if err != nil {
		return err
	}
	// Strict as every body the shop reads (one object, no key twice, nothing
	// after it) before the fake judges what it says.
	var fields map[string]json.RawMessage
	if err := web.DecodeStrict(body, &fields); err != nil {
		return err
	}
	answer, err := a.control.relay(c.Request().Context(), http.MethodPut, "/behaviour", body)
	if err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, answer)
}

// demoStats is GET /api/demo/stats: the shop's totals, and the charges
// (succeeded PaymentIntents) from the fake's.
func (a *API) demoStats(c echo.Context) error {
	s, err := a.stats(c.Request().Context())
	if err != nil {
		return fmt.Errorf("demo stats: %w", err)
	}
	if s["charges"], err = a.control.Succeeded(c.Request().Context()); err != nil {
		return fmt.Errorf("demo stats: %w", err)
	}
	return c.JSON(http.StatusOK, s)
}

// refusedError is the fake's 400: a body it cannot use.
type refusedError struct{ message string }

func (e *refusedError) Error() string { return e.message }

// relay sends body to the fake's control API and returns its answer; a
// 400 of the fake's is a 400 of the shop's, with the fake's reason.
func (c Control) relay(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	var raw json.RawMessage
	err := c.call(ctx, method, path, body, &raw)
	var refused *refusedError
	if errors.As(err, &refused) {
		return nil, web.Fail(problem.InvalidRequest, refused.message)
	}
	return raw, err
}
