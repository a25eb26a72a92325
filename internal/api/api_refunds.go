package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/refund"
	"exactlyonce/internal/web"
)

// Channel is the API's channel of refunds (refund.Ask.Channel): its
// answers are JSON.
const Channel = "api"

// refundJSON is a refund as the API shows it.
type refundJSON struct {
	ID               uuid.UUID  `json:"id"`
	OrderID          uuid.UUID  `json:"order_id"`
	Kind             string     `json:"kind"`
	Amount           int64      `json:"amount"`
	Currency         string     `json:"currency,omitempty"`
	State            string     `json:"state"`
	ProviderRefundID string     `json:"provider_refund_id,omitempty"`
	Reason           string     `json:"reason,omitempty"`
	Failure          string     `json:"failure,omitempty"`
	CreatedAt        *time.Time `json:"created_at,omitempty"`
}

// RefundAnswer is the answer stored under an API refund's key: 201 with the
// refund, or, when the provider refused it for good, 409 refund-refused.
func RefundAnswer(r refund.Refund) idem.Response {
	if r.State != "refunded" {
		p := problem.RefundRefused.New(r.Failure)
		return idem.Response{Status: p.Status, Body: p.JSON(), Header: map[string]string{echo.HeaderContentType: problem.ContentType}}
	}
	b, _ := json.Marshal(refundJSON{ID: r.ID, OrderID: r.OrderID, Kind: r.Kind, Amount: r.Amount, Currency: r.Currency,
		State: r.State, ProviderRefundID: r.ProviderRefundID})
	return idem.Response{Status: http.StatusCreated, Body: b, Header: map[string]string{
		echo.HeaderContentType: echo.MIMEApplicationJSON,
		echo.HeaderLocation:    "/api/orders/" + r.OrderID.String() + "/refunds"}}
}

// cancelOrder is POST /api/orders/:id/cancel: the customer's cancel, under
// its Idempotency-Key. The body, if any, is an empty JSON object.
func (h *Handler) cancelOrder(c echo.Context) error {
	key, err := parseIdempotencyKey(c.Request().Header.Values("Idempotency-Key"))
	if err != nil {
		return err
	}
	orderID, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return web.Fail(problem.NotFound, "no such order")
	}
	body, err := web.ReadBody(c)
	if err != nil {
		return err
	}
	if len(body) > 0 {
		var none struct{}
		if err := web.DecodeStrict(body, &none); err != nil {
			return web.Fail(problem.InvalidRequest, err.Error())
		}
	}
	customer := customerID(c)
	wait := applyWait(c.Request().Header, c.Response().Header())
	o, err := h.refunds.Do(c.Request().Context(), idem.Request{Scope: customer.String(), Key: key,
		Fingerprint: idem.Fingerprint([]byte(Channel), []byte(refund.KindCancel), orderID[:])}, wait,
		refund.Ask{CustomerID: customer, OrderID: orderID, Kind: refund.KindCancel, Channel: Channel})
	if err != nil {
		return err
	}
	idemhttp.Write(c.Response(), o)
	return nil
}

// listRefunds is GET /api/orders/:id/refunds: the order's refunds, oldest
// first, pending and failed ones too.
func (h *Handler) listRefunds(c echo.Context) error {
	orderID, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return web.Fail(problem.NotFound, "no such order")
	}
	customer := customerID(c)
	o, err := h.db.GetOrder(c.Request().Context(), db.GetOrderParams{CustomerID: customer, ID: orderID})
	if errors.Is(err, database.ErrNotFound) {
		return web.Fail(problem.NotFound, "no such order")
	}
	if err != nil {
		return fmt.Errorf("get order: %w", err)
	}
	rows, err := h.db.RefundsOfOrder(c.Request().Context(), db.RefundsOfOrderParams{CustomerID: customer, OrderID: orderID})
	if err != nil {
		return fmt.Errorf("refunds of order: %w", err)
	}
	out := make([]refundJSON, 0, len(rows))
	for _, r := range rows {
		v := refundJSON{ID: r.ID, OrderID: r.OrderID, Kind: r.Kind, Amount: r.Amount, Currency: o.Currency, State: r.State,
			Reason: r.Reason, CreatedAt: &r.CreatedAt}
		if r.ProviderRefundID != nil {
			v.ProviderRefundID = *r.ProviderRefundID
		}
		if r.Failure != nil {
			v.Failure = *r.Failure
		}
		out = append(out, v)
	}
	return c.JSON(http.StatusOK, out)
}
