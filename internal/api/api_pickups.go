package api

import (
	"encoding/json"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/idem/idemecho"
	"exactlyonce/internal/pickup"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// The pickup reservation as a JSON endpoint, made idempotent by the kit's
// middleware: the kit's example of a key on an API route (docs/kit.md).

// keyed is the kit's Idempotency-Key middleware for API routes: keys scoped
// to the customer; its refusals are answered by classify, from the error
// table, as the engine's same errors are.
func (h *Handler) keyed() echo.MiddlewareFunc {
	return idemecho.New(idemecho.Options{
		Store: h.pickupKeys,
		Scope: func(c echo.Context) (string, error) { return customerID(c).String(), nil },
	}).Middleware()
}

type pickupJSON struct {
	ID   uuid.UUID `json:"id"`
	Slot string    `json:"slot"`
	Name string    `json:"name"`
}

func (h *Handler) reservePickupAPI(c echo.Context) error {
	body, err := web.ReadBody(c)
	if err != nil {
		return err
	}
	var req struct {
		Slot string `json:"slot"`
		Name string `json:"name"`
	}
	if err := web.DecodeStrict(body, &req); err != nil {
		return web.Fail(problem.InvalidRequest, err.Error())
	}
	name, err := pickup.Validate(req.Slot, req.Name)
	if err != nil {
		return err
	}
	resp, err := h.pickups.ReserveFinishing(c.Request().Context(), idemecho.LockOf(c), customerID(c).String(), req.Slot, name,
		func(id uuid.UUID) idem.Response {
			b, _ := json.Marshal(pickupJSON{ID: id, Slot: req.Slot, Name: name})
			return idem.Response{Status: http.StatusCreated, Body: b, Header: map[string]string{
				echo.HeaderLocation: "/api/pickups/" + id.String(), echo.HeaderContentType: echo.MIMEApplicationJSON}}
		})
	if err != nil {
		return err
	}
	for k, v := range resp.Header {
		c.Response().Header().Set(k, v)
	}
	return c.Blob(resp.Status, echo.MIMEApplicationJSON, resp.Body)
}

func (h *Handler) getPickupAPI(c echo.Context) error {
	r, err := h.pickups.Get(c.Request().Context(), customerID(c).String(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pickupJSON{ID: r.ID, Slot: r.Slot.ID, Name: r.Name})
}
