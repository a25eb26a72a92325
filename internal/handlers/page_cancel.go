package handlers

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/idem"
	"exactlyonce/idem/idemhttp"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/refund"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// Channel is the shop pages' channel of refunds (refund.Ask.Channel): a
// cancel sent from an order's page is answered with that page.
const Channel = "page"

// CancelAnswer is the answer stored under a cancel form's key: back to the
// order's page, which tells how the cancel ended (refunded, or refused by
// the provider), the first time and on every resubmit.
func CancelAnswer(r refund.Refund) idem.Response {
	return idem.Redirect("/orders/" + r.OrderID.String() + "?" + url.Values{"cancel": {r.State}}.Encode())
}

// cancelVersion binds a cancel form's key to its order: a key minted for
// one order's form is refused for another's.
func cancelVersion(orderID uuid.UUID) string { return "cancel:" + orderID.String() }

// cancelForm is the cancel form of an order that may still be cancelled,
// with a key minted now, or nil.
func (h *Handler) cancelForm(c echo.Context, customer uuid.UUID, o db.Order, left int64) *views.CancelForm {
	if o.CancelledAt != nil || left <= 0 || time.Since(o.CreatedAt) > h.refunds.CancelWindow() {
		return nil
	}
	return &views.CancelForm{CSRFToken: csrfToken(c), Action: "/orders/" + o.ID.String() + "/cancel",
		Key: h.cancelKeys.Mint(customer.String(), cancelVersion(o.ID)), Refund: views.Money{Minor: left, Currency: o.Currency},
		Until: o.CreatedAt.Add(h.refunds.CancelWindow())}
}

// cancelOrder is POST /orders/:id/cancel: the shopper's cancel, under the
// key its form was rendered with, so a double click or a resubmit cancels
// once and lands on the same page.
func (h *Handler) cancelOrder(c echo.Context) error {
	customer, ok := shopper(c)
	orderID, err := uuid.Parse(c.Param("id"))
	if !ok || err != nil {
		return web.Fail(problem.NotFound, "no such order")
	}
	key := idemhttp.FormKeyOf(c.Request())
	if err := h.cancelKeys.Verify(customer.String(), cancelVersion(orderID), key); err != nil {
		return &web.Failure{Kind: problem.CancelFormRefused, Detail: err.Error()}
	}
	o, err := h.refunds.Do(c.Request().Context(), idem.Request{Scope: customer.String(), Key: key.Key,
		Fingerprint: idem.Fingerprint([]byte(Channel), []byte(refund.KindCancel), orderID[:])}, idem.DefaultWait,
		refund.Ask{CustomerID: customer, OrderID: orderID, Kind: refund.KindCancel, Channel: Channel})
	if err != nil {
		return err
	}
	idemhttp.Write(c.Response(), o)
	return nil
}

// orderRefunds is what the order's page shows of its refunds, and what is
// left to refund.
func (h *Handler) orderRefunds(ctx context.Context, customer uuid.UUID, o db.Order) ([]views.RefundLine, int64, error) {
	rows, err := h.db.RefundsOfOrder(ctx, db.RefundsOfOrderParams{CustomerID: customer, OrderID: o.ID})
	if err != nil {
		return nil, 0, fmt.Errorf("refunds of order: %w", err)
	}
	left := o.Amount
	var out []views.RefundLine
	for _, r := range rows {
		if r.State != "failed" {
			left -= r.Amount
		}
		out = append(out, views.RefundLine{Kind: r.Kind, Amount: views.Money{Minor: r.Amount, Currency: o.Currency},
			State: r.State, At: r.CreatedAt})
	}
	return out, left, nil
}
