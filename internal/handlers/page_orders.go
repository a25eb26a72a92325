package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/session"
	"exactlyonce/internal/web"
	"exactlyonce/views"
)

// receiptPage is GET /orders/:id, visible to the order's owner only:
// another shopper's order is not found, exactly like one that does not
// exist. ?replayed=1 adds the note that a resent form charged nothing.
func (h *Handler) receiptPage(c echo.Context) error {
	id, ok := shopper(c)
	orderID, err := uuid.Parse(c.Param("id"))
	if !ok || err != nil {
		return web.Fail(problem.NotFound, "no such order")
	}
	o, err := h.db.GetOrder(c.Request().Context(), db.GetOrderParams{CustomerID: id, ID: orderID})
	if errors.Is(err, database.ErrNotFound) {
		return web.Fail(problem.NotFound, "no such order")
	}
	if err != nil {
		return fmt.Errorf("get order: %w", err)
	}
	var lines []catalog.Line
	if err := json.Unmarshal(o.Items, &lines); err != nil {
		return fmt.Errorf("decode order items: %w", err)
	}
	cartID, _, err := h.carts.OfOrder(c.Request().Context(), id, o.ID)
	if err != nil {
		return err
	}
	points, err := h.db.OrderPoints(c.Request().Context(), db.OrderPointsParams{CustomerID: id, OrderID: o.ID})
	if err != nil {
		return fmt.Errorf("order points: %w", err)
	}
	balance, err := h.db.PointsBalance(c.Request().Context(), id)
	if err != nil {
		return fmt.Errorf("points balance: %w", err)
	}
	if err := h.readCartCount(c); err != nil {
		return err
	}
	refunds, left, err := h.orderRefunds(c.Request().Context(), id, o)
	if err != nil {
		return err
	}
	return web.Render(c, http.StatusOK, views.Receipt(views.ReceiptPage{
		Refunds: refunds, CancelledAt: o.CancelledAt, Cancel: h.cancelForm(c, id, o, left), CancelOutcome: c.QueryParam("cancel"),
		PointsAwarded: points.Awarded, OrderPoints: points.Points, Balance: balance,
		CartID:        cartID.String(),
		OrderID:       o.ID.String(),
		Amount:        views.Money{Minor: o.Amount, Currency: o.Currency},
		PlacedAt:      o.CreatedAt,
		Lines:         viewLines(lines, o.Currency),
		AlreadyPlaced: c.QueryParam("replayed") == "1",
	}))
}

// ordersPage is GET /orders: the shopper's latest orders, newest first.
func (h *Handler) ordersPage(c echo.Context) error {
	page := views.OrdersPage{CSRF: csrfToken(c), SessionDays: int(session.MaxAge / (24 * time.Hour))}
	id, ok := shopper(c)
	if !ok {
		return web.Render(c, http.StatusOK, views.Orders(page))
	}
	page.SignedIn = true
	if err := h.readCartCount(c); err != nil {
		return err
	}
	rows, err := h.db.ListOrders(c.Request().Context(), db.ListOrdersParams{CustomerID: id, MaxRows: 100})
	if err != nil {
		return fmt.Errorf("list orders: %w", err)
	}
	if page.Points, err = h.db.PointsBalance(c.Request().Context(), id); err != nil {
		return fmt.Errorf("points balance: %w", err)
	}
	for _, o := range rows {
		var lines []catalog.Line
		if err := json.Unmarshal(o.Items, &lines); err != nil {
			return fmt.Errorf("decode order items: %w", err)
		}
		items := 0
		for _, l := range lines {
			items += l.Quantity
		}
		page.Orders = append(page.Orders, views.OrderSummary{
			ID: o.ID.String(), URL: "/orders/" + o.ID.String(),
			Amount:   views.Money{Minor: o.Amount, Currency: o.Currency},
			PlacedAt: o.CreatedAt, Items: items,
		})
	}
	return web.Render(c, http.StatusOK, views.Orders(page))
}
