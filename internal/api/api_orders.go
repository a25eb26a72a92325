package api

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// orderRoute is the route fingerprinted with every API order, so a key
// first used here cannot be replayed by another endpoint.
const orderRoute = "/api/orders"

// defaultCard is the card charged when an API client names none: the fake
// provider's always-succeeding test card.
const defaultCard = payment.SucceedingCard

type orderRequest struct {
	Items []catalog.Item `json:"items"`
	// Card is optional and only meaningful to the fake provider.
	Card string `json:"card,omitempty"`
	// ReturnURL, optional, is where the card holder's bank sends them back
	// after 3-D Secure: with it, an order whose bank asks to authenticate
	// the payment is answered 202 with the bank's page (next_action);
	// without it, such a payment is canceled (402 payment-not-completed).
	ReturnURL string `json:"return_url,omitempty"`
}

// decodeOrder reads an order body: strictly decoded, the card defaulted and
// normalised, and the fingerprint of the result. Every error is a 400 and
// comes before the claim, so nothing is stored and the same key works once
// the body is fixed.
func decodeOrder(body []byte) (req orderRequest, fp []byte, err error) {
	if err := web.DecodeStrict(body, &req); err != nil {
		return orderRequest{}, nil, err
	}
	req.Card = orderCard(req.Card)
	if err := checkReturnURL(req.ReturnURL); err != nil {
		return orderRequest{}, nil, err
	}
	if fp, err = req.fingerprint(); err != nil {
		return orderRequest{}, nil, err
	}
	return req, fp, nil
}

// orderCard is the card an order names, defaulted and normalised as the
// fingerprint needs it: "4242 4242 4242 4242" and "4242424242424242" are
// one request. A card that is not a number is left as sent for Place to
// refuse, before the claim, so the card is judged in one place.
func orderCard(card string) string {
	if card == "" {
		return defaultCard
	}
	if normal, ok := checkout.NormalizeCard(card); ok {
		return normal
	}
	return card
}

// fingerprint identifies the order as decoded and normalised, never as the
// body was spelt: the items in SKU order and the card's last four digits
// (the whole number must not be stored, even hashed: the digits an attacker
// does not know are few enough to try). Two bodies that decode to the same
// order share a fingerprint; two that do not, never do.
func (r orderRequest) fingerprint() ([]byte, error) {
	var items []canonicalItem // null for no items, as the body had it
	if r.Items != nil {
		items = make([]canonicalItem, len(r.Items))
	}
	for i, it := range r.Items {
		items[i] = canonicalItem{Quantity: it.Quantity, SKU: it.SKU}
	}
	slices.SortStableFunc(items, func(a, b canonicalItem) int {
		return cmp.Or(strings.Compare(a.SKU, b.SKU), cmp.Compare(a.Quantity, b.Quantity))
	})
	// The fields are in name order, so encoding/json writes the canonical
	// form itself; FuzzOrderBody checks that it is what idem.NormalizeJSON
	// makes of the body.
	body, err := json.Marshal(struct {
		CardLast4 string          `json:"card_last4"`
		Items     []canonicalItem `json:"items"`
		// Left out when empty, so that an order without one keeps the
		// fingerprint it had before return_url existed.
		ReturnURL string `json:"return_url,omitempty"`
	}{r.Card[max(0, len(r.Card)-4):], items, r.ReturnURL})
	if err != nil {
		return nil, fmt.Errorf("encode order: %w", err)
	}
	return checkout.Fingerprint(http.MethodPost, orderRoute, body), nil
}

// canonicalItem is an order line with its members in name order.
type canonicalItem struct {
	Quantity int    `json:"quantity"`
	SKU      string `json:"sku"`
}

// placeOrder is POST /api/orders: the idempotent order endpoint.
func (h *Handler) placeOrder(c echo.Context) error {
	key, err := parseIdempotencyKey(c.Request().Header.Values("Idempotency-Key"))
	if err != nil {
		return err
	}
	body, err := web.ReadBody(c)
	if err != nil {
		return err
	}
	req, fp, err := decodeOrder(body)
	if err != nil {
		return err
	}
	wait := applyWait(c.Request().Header, c.Response().Header())
	res, err := h.checkout.PlaceOrAwait(c.Request().Context(), checkout.Attempt{
		CustomerID: customerID(c), Key: key, Fingerprint: fp,
		Order: checkout.Order{Items: req.Items, Card: req.Card}, ReturnURL: req.ReturnURL,
	}, wait)
	var authn *checkout.AuthenticationRequiredError
	if errors.As(err, &authn) {
		return writeAuthenticationRequired(c, authn, req.ReturnURL)
	}
	if err != nil {
		return err
	}
	return writeResult(c, res)
}

// writeResult sends an engine result as stored: the same status and the
// same bytes the first time and on every replay, marked when replayed.
func writeResult(c echo.Context, res checkout.Result) error {
	header := c.Response().Header()
	if res.Replayed {
		header.Set("Idempotent-Replayed", "true")
	}
	if res.Status == http.StatusCreated {
		// Only the order id is needed: decoding the whole receipt (its
		// lines), and then decoding it with encoding/json v1, each showed
		// in the CPU profile of replays.
		var placed struct {
			OrderID uuid.UUID `json:"order_id"`
		}
		if err := jsonv2.Unmarshal(res.Body, &placed); err != nil {
			return fmt.Errorf("decode stored receipt: %w", err)
		}
		header.Set(echo.HeaderLocation, "/api/orders/"+placed.OrderID.String())
		return c.Blob(res.Status, echo.MIMEApplicationJSON, res.Body)
	}
	return c.Blob(res.Status, problem.ContentType, res.Body)
}

// orderView is an order as GET returns it: the receipt plus when it was made.
type orderView struct {
	checkout.Receipt
	CreatedAt time.Time `json:"created_at"`
	// CancelledAt is when the customer cancelled it (status "cancelled").
	CancelledAt *time.Time `json:"cancelled_at,omitempty"`
}

func newOrderView(o db.Order) (orderView, error) {
	v := orderView{
		Receipt: checkout.Receipt{
			OrderID: o.ID, ChargeID: o.ChargeID, Amount: o.Amount, Currency: o.Currency, Status: "paid",
		},
		CreatedAt: o.CreatedAt, CancelledAt: o.CancelledAt,
	}
	if o.CancelledAt != nil {
		v.Status = "cancelled"
	}
	if err := json.Unmarshal(o.Items, &v.Items); err != nil {
		return orderView{}, fmt.Errorf("decode order items: %w", err)
	}
	return v, nil
}

// getOrder is GET /api/orders/:id. Another customer's order is a 404, not a
// 403: its existence is none of the caller's business.
func (h *Handler) getOrder(c echo.Context) error {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		return web.Fail(problem.NotFound, "no such order")
	}
	o, err := h.db.GetOrder(c.Request().Context(), db.GetOrderParams{CustomerID: customerID(c), ID: id})
	if errors.Is(err, database.ErrNotFound) {
		return web.Fail(problem.NotFound, "no such order")
	}
	if err != nil {
		return fmt.Errorf("get order: %w", err)
	}
	v, err := newOrderView(o)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// listOrders is GET /api/orders: the caller's latest orders, newest first.
func (h *Handler) listOrders(c echo.Context) error {
	rows, err := h.db.ListOrders(c.Request().Context(), db.ListOrdersParams{CustomerID: customerID(c), MaxRows: 100})
	if err != nil {
		return fmt.Errorf("list orders: %w", err)
	}
	views := make([]orderView, 0, len(rows))
	for _, o := range rows {
		v, err := newOrderView(o)
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	return c.JSON(http.StatusOK, views)
}
