package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/views"
)

// adminFindRows bounds each list of /orders.
const adminFindRows = 50

// orderNumber is an order's number as a customer quotes it
// (views.OrderNumber): eight hex digits, with or without the "#".
var orderNumber = regexp.MustCompile(`^#?([0-9A-Fa-f]{8})$`)

// mailAddress is the address the confirmation goes to
// (mail.recipient): the customer's id in it.
var mailAddress = regexp.MustCompile(`^customer-([0-9a-fA-F-]{36})@`)

// adminFind is the admin listener's /orders: an order found from what a
// customer quotes (?q=), or, without a query, what waits for the shop or
// an operator.
func (a *App) adminFind(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	page := views.AdminFind{Query: q}
	var err error
	if q == "" {
		page.Attention, err = a.attention(ctx)
	} else {
		err = a.find(ctx, q, &page)
	}
	if err != nil {
		a.adminError(w, r, "find an order", err)
		return
	}
	a.renderAdmin(w, r, views.AdminFindPage(page))
}

// find reads q as each identifier a customer may quote, in turn, and
// fills page with what it names.
func (a *App) find(ctx context.Context, q string, page *views.AdminFind) error {
	if m := orderNumber.FindStringSubmatch(q); m != nil {
		rows, err := a.DB.OrdersByNumber(ctx, db.OrdersByNumberParams{Number: m[1], MaxRows: adminFindRows})
		if err != nil {
			return fmt.Errorf("orders by number: %w", err)
		}
		page.Orders = foundOrders(rows)
		page.Said = said(len(page.Orders), "order", "numbered #"+strings.ToUpper(m[1]))
		return nil
	}
	if strings.HasPrefix(q, "pi_") {
		return a.findIntent(ctx, q, page)
	}
	if m := mailAddress.FindStringSubmatch(q); m != nil {
		q = m[1]
	} else if strings.Contains(q, "@") {
		page.Said = "No customer has that address: the shop's customers have no address of their own, and its mail goes to customer-<id>@<domain>."
		return nil
	}
	if id, err := uuid.Parse(q); err == nil {
		return a.findID(ctx, id, page)
	}
	rows, err := a.DB.CustomersNamed(ctx, db.CustomersNamedParams{Name: q, MaxRows: adminFindRows})
	if err != nil {
		return fmt.Errorf("customers named: %w", err)
	}
	for _, c := range rows {
		page.Customers = append(page.Customers, views.FoundCustomer{ID: c.ID.String(), Name: c.Name,
			Href: "/orders?q=" + c.ID.String(), Created: c.CreatedAt.UTC().Format(time.DateTime), Orders: c.Orders})
	}
	page.Said = said(len(rows), "customer", "whose name holds "+strconv.Quote(q))
	return nil
}

// findID reads a UUID as an order's id, then as a customer's.
func (a *App) findID(ctx context.Context, id uuid.UUID, page *views.AdminFind) error {
	o, err := a.orderWithID(ctx, id)
	switch {
	case err == nil:
		page.Orders = foundOrders([]db.OrdersByNumberRow{o})
		page.Said = "The order with this id:"
		return nil
	case !errors.Is(err, database.ErrNotFound):
		return err
	}
	customer, err := a.DB.OrdersOfCustomer(ctx, db.OrdersOfCustomerParams{CustomerID: id, MaxRows: adminFindRows})
	if err != nil {
		return fmt.Errorf("orders of customer: %w", err)
	}
	for _, o := range customer {
		page.Orders = append(page.Orders, foundOrder(o.ID, o.CustomerID, o.CustomerName, o.Amount, o.Currency, o.ChargeID, o.CreatedAt))
	}
	page.Said = said(len(customer), "order", "of the customer with this id, newest first")
	if len(customer) == 0 {
		page.Said = "No order has this id, and no customer with this id has an order."
	}
	return nil
}

// findIntent finds the order a PaymentIntent paid or, when none did, the
// key whose operation made it.
func (a *App) findIntent(ctx context.Context, intent string, page *views.AdminFind) error {
	rows, err := a.DB.OrdersByIntent(ctx, db.OrdersByIntentParams{IntentID: intent, MaxRows: adminFindRows})
	if err != nil {
		return fmt.Errorf("orders by intent: %w", err)
	}
	for _, o := range rows {
		page.Orders = append(page.Orders, foundOrder(o.ID, o.CustomerID, o.CustomerName, o.Amount, o.Currency, o.ChargeID, o.CreatedAt))
	}
	if len(rows) > 0 {
		page.Said = "The order this PaymentIntent paid:"
		return nil
	}
	k, err := a.DB.KeyOfIntent(ctx, &intent)
	if errors.Is(err, database.ErrNotFound) {
		page.Said = "No order and no key of this shop holds this PaymentIntent: if it succeeded, it is foreign (see Payments), or its key was swept."
		return nil
	}
	if err != nil {
		return fmt.Errorf("key of intent: %w", err)
	}
	page.Said = "No order holds this PaymentIntent; the key whose operation made it:"
	page.Key = &views.FoundKey{Customer: k.CustomerID.String(), Key: k.Key, Status: k.Status,
		Answer: answerOf(k.ResponseStatus), Created: k.CreatedAt.UTC().Format(time.DateTime),
		TracesHref: tracesHref(k.CustomerID, k.Key)}
	return nil
}

// said words how many of noun (an "order", a "customer") were found, and
// how: "2 orders of the customer with this id:".
func said(n int, noun, how string) string {
	switch n {
	case 0:
		return "No " + noun + " " + how + "."
	case 1:
		return "1 " + noun + " " + how + ":"
	}
	return strconv.Itoa(n) + " " + noun + "s " + how + ":"
}

// orderWithID finds an order by its whole id, through its number's index
// (orders_pkey leads with the customer, whom the operator may not know);
// database.ErrNotFound when there is none.
func (a *App) orderWithID(ctx context.Context, id uuid.UUID) (db.OrdersByNumberRow, error) {
	number := strings.TrimPrefix(views.OrderNumber(id.String()), "#")
	rows, err := a.DB.OrdersByNumber(ctx, db.OrdersByNumberParams{Number: number, MaxRows: adminFindRows})
	if err != nil {
		return db.OrdersByNumberRow{}, fmt.Errorf("orders by number: %w", err)
	}
	for _, o := range rows {
		if o.ID == id {
			return o, nil
		}
	}
	return db.OrdersByNumberRow{}, database.ErrNotFound
}

func foundOrders(rows []db.OrdersByNumberRow) []views.FoundOrder {
	var out []views.FoundOrder
	for _, o := range rows {
		out = append(out, foundOrder(o.ID, o.CustomerID, o.CustomerName, o.Amount, o.Currency, o.ChargeID, o.CreatedAt))
	}
	return out
}

func foundOrder(id, customer uuid.UUID, name string, amount int64, currency, intent string, created time.Time) views.FoundOrder {
	return views.FoundOrder{Number: views.OrderNumber(id.String()), ID: id.String(), Href: "/orders/" + id.String(),
		Customer: customer.String(), CustomerName: name, Amount: views.FormatMoney(amount, currency),
		Intent: intent, Created: created.UTC().Format(time.DateTime)}
}

// answerOf words a key's stored answer.
func answerOf(status *int32) string {
	if status == nil {
		return "none yet"
	}
	return strconv.Itoa(int(*status)) + " " + http.StatusText(int(*status))
}

// tracesHref is the admin's traces of one key.
func tracesHref(customer uuid.UUID, key string) string {
	return "/traces?" + url.Values{"customer": {customer.String()}, "key": {key}}.Encode()
}

// attention counts and lists what waits.
func (a *App) attention(ctx context.Context) (views.Attention, error) {
	n, err := a.DB.AttentionCounts(ctx)
	if err != nil {
		return views.Attention{}, fmt.Errorf("attention counts: %w", err)
	}
	at := views.Attention{Stuck: n.Stuck, Parked: n.Parked, Awaiting: n.Awaiting, Refunded: n.Refunded,
		Foreign: n.ForeignIntents, Refused: n.RefusedRefunds}
	keys, err := a.DB.AttentionKeys(ctx, adminFindRows)
	if err != nil {
		return views.Attention{}, fmt.Errorf("attention keys: %w", err)
	}
	for _, k := range keys {
		at.Keys = append(at.Keys, views.WaitingKey{Customer: k.CustomerID.String(), Key: k.Key, State: k.State,
			Intent: deref(k.PaymentIntentID), Created: k.CreatedAt.UTC().Format(time.DateTime),
			LockedUntil: k.LockedUntil.UTC().Format(time.DateTime), TracesHref: tracesHref(k.CustomerID, k.Key),
			SettleAttempts: k.SettleAttempts})
	}
	refunds, err := a.DB.LatestRefunds(ctx, adminFindRows)
	if err != nil {
		return views.Attention{}, fmt.Errorf("latest refunds: %w", err)
	}
	for _, r := range refunds {
		m := views.MadeRefund{Intent: r.ChargeID, Refund: r.RefundID, Amount: views.FormatMoney(r.Amount, r.Currency),
			Key: deref(r.Key), At: r.At.UTC().Format(time.DateTime), LostOperation: r.LostOperation}
		if r.CustomerID != nil {
			m.Customer = r.CustomerID.String()
		}
		at.Refunds = append(at.Refunds, m)
	}
	return at, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// adminOrder is the admin listener's /orders/{id}: one order and all the
// shop knows of it, for the operator (the shop's receipt opens only for
// the shopper who placed it).
func (a *App) adminOrder(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		http.Error(w, "not an order id: want a UUID (or search /orders?q= for a number)", http.StatusBadRequest)
		return
	}
	page, err := a.operatorOrder(ctx, id)
	if errors.Is(err, database.ErrNotFound) {
		http.Error(w, "no such order", http.StatusNotFound)
		return
	}
	if err != nil {
		a.adminError(w, r, "order", err)
		return
	}
	page.Refund, page.RefundOutcome = a.adminRefundForm(id), r.URL.Query().Get("refund")
	a.renderAdmin(w, r, views.AdminOrderPage(page))
}

// operatorOrder reads everything the order's page shows.
func (a *App) operatorOrder(ctx context.Context, id uuid.UUID) (views.AdminOrder, error) {
	found, err := a.orderWithID(ctx, id)
	if err != nil {
		return views.AdminOrder{}, err
	}
	o, err := a.DB.OperatorOrder(ctx, db.OperatorOrderParams{CustomerID: found.CustomerID, ID: id})
	if err != nil {
		return views.AdminOrder{}, fmt.Errorf("operator order: %w", err)
	}
	p := views.AdminOrder{Number: views.OrderNumber(o.ID.String()), ID: o.ID.String(), Customer: o.CustomerID.String(),
		CustomerName: o.CustomerName, Amount: views.FormatMoney(o.Amount, o.Currency),
		Created: o.CreatedAt.UTC().Format(time.DateTime), Intent: o.ChargeID, Key: o.IdempotencyKey,
		KeyStatus: deref(o.KeyStatus), KeyAnswer: answerOf(o.ResponseStatus), ProviderKey: deref(o.ProviderKey),
		TracesHref: tracesHref(o.CustomerID, o.IdempotencyKey)}
	p.KeyCreated, p.KeyFinished, p.KeyParked = when(o.KeyCreatedAt), when(o.KeyFinishedAt), when(o.ParkedAt)
	if o.CartID != nil {
		p.Cart = o.CartID.String()
	}
	var lines []catalog.Line
	if err := json.Unmarshal(o.Items, &lines); err != nil {
		return views.AdminOrder{}, fmt.Errorf("decode order items: %w", err)
	}
	for _, l := range lines {
		p.Lines = append(p.Lines, views.Line{SKU: l.SKU, Name: l.Name, Quantity: int(l.Quantity),
			LineTotal: views.Money{Minor: l.LineTotal, Currency: o.Currency}})
	}
	return p, a.orderHistory(ctx, o, &p)
}

// orderHistory adds what happened around the order: the key's trail, the
// provider's events and refunds, the jobs, the mail and the points.
func (a *App) orderHistory(ctx context.Context, o db.OperatorOrderRow, p *views.AdminOrder) error {
	trail, err := a.DB.ListKeyEvents(ctx, db.ListKeyEventsParams{CustomerID: o.CustomerID, Key: o.IdempotencyKey, MaxRows: 100})
	if err != nil {
		return fmt.Errorf("key events: %w", err)
	}
	for _, e := range trail {
		p.Trail = append(p.Trail, views.TrailEvent{Event: e.Event, At: e.At.UTC().Format(time.DateTime + ".000"), Detail: string(e.Detail)})
	}
	events, err := a.DB.IntentEvents(ctx, o.ChargeID)
	if err != nil {
		return fmt.Errorf("intent events: %w", err)
	}
	for _, e := range events {
		p.Events = append(p.Events, views.IntentEvent{ID: e.EventID, Type: e.Type, Effect: e.Effect, At: e.ReceivedAt.UTC().Format(time.DateTime)})
	}
	refunds, err := a.DB.IntentRefunds(ctx, o.ChargeID)
	if err != nil {
		return fmt.Errorf("intent refunds: %w", err)
	}
	for _, r := range refunds {
		p.Refunds = append(p.Refunds, views.MadeRefund{Intent: o.ChargeID, Refund: r.RefundID,
			Amount: views.FormatMoney(r.Amount, r.Currency), At: r.At.UTC().Format(time.DateTime), LostOperation: r.LostOperation})
	}
	jobs, err := a.DB.OrderJobs(ctx, o.ID)
	if err != nil {
		return fmt.Errorf("order jobs: %w", err)
	}
	for _, j := range jobs {
		p.Jobs = append(p.Jobs, views.OrderJob{ID: strconv.FormatInt(j.ID, 10), Kind: j.Kind, State: string(j.State),
			Attempts: fmt.Sprintf("%d of %d", j.Attempt, j.MaxAttempts), Created: j.CreatedAt.UTC().Format(time.DateTime),
			Finalized: when(j.FinalizedAt), LastError: j.LastError})
	}
	mails, err := a.DB.OrderMail(ctx, db.OrderMailParams{CustomerID: o.CustomerID, OrderID: o.ID})
	if err != nil {
		return fmt.Errorf("order mail: %w", err)
	}
	for _, m := range mails {
		p.Mails = append(p.Mails, views.OrderMail{MessageID: m.MessageID, To: m.Recipient, Sent: m.SentAt.UTC().Format(time.DateTime)})
	}
	points, err := a.DB.OrderPoints(ctx, db.OrderPointsParams{CustomerID: o.CustomerID, OrderID: o.ID})
	if err != nil {
		return fmt.Errorf("order points: %w", err)
	}
	own, err := a.DB.RefundsOfOrder(ctx, db.RefundsOfOrderParams{CustomerID: o.CustomerID, OrderID: o.ID})
	if err != nil {
		return fmt.Errorf("refunds of order: %w", err)
	}
	for _, r := range own {
		p.OrderRefunds = append(p.OrderRefunds, views.AdminOrderRefund{ID: r.ID.String(), Kind: r.Kind,
			Amount: views.FormatMoney(r.Amount, o.Currency), State: r.State, Reason: r.Reason,
			ProviderRefund: deref(r.ProviderRefundID), Failure: deref(r.Failure), At: r.CreatedAt.UTC().Format(time.DateTime)})
	}
	if o.CancelledAt != nil {
		p.Cancelled = o.CancelledAt.UTC().Format(time.DateTime)
	}
	p.Points = "not awarded yet"
	if points.Awarded {
		p.Points = strconv.FormatInt(points.Points, 10) + " awarded"
	}
	return nil
}

// when formats an optional time, "" when unset.
func when(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.DateTime)
}
