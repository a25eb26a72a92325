package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Item is a product and quantity to order.
type Item struct {
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

// OrderRequest is the body of POST /api/orders. Card is optional and only
// meaningful to the demo's fake provider.
type OrderRequest struct {
	Items []Item `json:"items"`
	Card  string `json:"card,omitempty"`
	// ReturnURL, optional, is where the card holder's bank sends them back
	// after 3-D Secure (an absolute URL of yours): with it, a payment the
	// bank asks to authenticate is an *ActionRequiredError to act on;
	// without it, such a payment is canceled (a 402 *Problem).
	ReturnURL string `json:"return_url,omitempty"`
}

// Line is a priced line of an order.
type Line struct {
	SKU       string `json:"sku"`
	Name      string `json:"name"`
	Quantity  int    `json:"quantity"`
	UnitPrice int64  `json:"unit_price"`
	LineTotal int64  `json:"line_total"`
}

// Order is a placed, paid order.
type Order struct {
	OrderID   string    `json:"order_id"`
	ChargeID  string    `json:"charge_id"`
	Amount    int64     `json:"amount"`
	Currency  string    `json:"currency"`
	Status    string    `json:"status"`
	Items     []Line    `json:"items"`
	CreatedAt time.Time `json:"created_at,omitzero"`

	// Key is the idempotency key that placed it. Replayed says the answer
	// was the server's stored result of an earlier attempt; Reconciled
	// says retrying had stopped and the order was found through the key's
	// audit trail instead.
	Key        string `json:"-"`
	Replayed   bool   `json:"-"`
	Reconciled bool   `json:"-"`
}

// PlaceOrder places the order of the logical operation op (a name the
// caller keeps for "this purchase", such as a cart id). The first call
// saves a new key for op before sending anything; every later call, in
// this process or after a restart, sends the same key, so op is charged
// at most once. Call Keys.Forget(op) when the purchase is over.
func (c *Client) PlaceOrder(ctx context.Context, op string, order OrderRequest) (Order, error) {
	body, err := json.Marshal(order)
	if err != nil {
		return Order{}, err
	}
	e, err := c.Keys.Key(op)
	if err != nil {
		return Order{}, fmt.Errorf("key of %q: %w", op, err)
	}
	giveUp := time.Now().Add(c.MaxElapsed)
	p, err := c.policyRetrying(ctx, op, e, giveUp)
	if err != nil {
		return Order{}, err
	}
	stop := retryDeadline(e, p)
	header := http.Header{"Idempotency-Key": {`"` + e.Key + `"`}}

	for attempt := 1; ; attempt++ {
		if !time.Now().Before(stop) {
			return c.reconcile(ctx, op, e, "the retry window of the key has ended")
		}
		r, err := c.send(ctx, http.MethodPost, "/api/orders", body, header)
		ev := Event{Op: op, Key: e.Key, Attempt: attempt, Status: r.status, Err: err}
		switch {
		case err != nil && !networkError(ctx, err):
			c.observe(ev)
			return Order{}, fmt.Errorf("place order %q (key kept for a retry): %w", op, err)
		case err == nil && r.status == http.StatusAccepted:
			c.observe(ev)
			var action struct {
				PaymentIntent string `json:"payment_intent"`
				NextAction    struct {
					RedirectToURL struct {
						URL string `json:"url"`
					} `json:"redirect_to_url"`
				} `json:"next_action"`
			}
			if err := json.Unmarshal(r.body, &action); err != nil || action.NextAction.RedirectToURL.URL == "" {
				return Order{}, fmt.Errorf("decode the action the order requires: %v (%s)", err, r.body)
			}
			return Order{}, &ActionRequiredError{URL: action.NextAction.RedirectToURL.URL, PaymentIntent: action.PaymentIntent}
		case err == nil && r.status >= 200 && r.status < 300:
			c.observe(ev)
			var o Order
			if err := json.Unmarshal(r.body, &o); err != nil {
				return Order{}, fmt.Errorf("decode order: %w", err)
			}
			o.Key = e.Key
			o.Replayed = r.header.Get("Idempotent-Replayed") == "true"
			return o, nil
		case err == nil && !retryableAnswer(r.status, r.body):
			c.observe(ev)
			return Order{}, problemOf(r)
		}

		ev.Wait = c.Backoff(attempt-1, r.header) // r.header is nil after a network error
		if now := time.Now(); now.Add(ev.Wait).After(giveUp) {
			ev.Wait, ev.Note = 0, "out of retries for this call"
			c.observe(ev)
			return c.reconcile(ctx, op, e, "the call's retry budget is spent")
		} else if now.Add(ev.Wait).After(stop) {
			ev.Wait = stop.Sub(now)
			ev.Note = "waiting for the end of the retry window, then reconciling"
		} else {
			ev.Note = "retrying with the same key"
		}
		c.observe(ev)
		select {
		case <-ctx.Done():
			return Order{}, fmt.Errorf("place order %q (key kept for a retry): %w", op, ctx.Err())
		case <-time.After(ev.Wait):
		}
	}
}

// policyRetrying reads the policy, retrying network errors with the same
// backoff as the order until giveUp: without the retention window the
// client cannot know how long it may retry, so it sends nothing before.
func (c *Client) policyRetrying(ctx context.Context, op string, e Entry, giveUp time.Time) (Policy, error) {
	for attempt := 0; ; attempt++ {
		p, err := c.Policy(ctx)
		var answered *Problem
		if err == nil || errors.As(err, &answered) || !networkError(ctx, err) {
			return p, err
		}
		wait := c.Backoff(attempt, nil)
		if time.Now().Add(wait).After(giveUp) {
			return Policy{}, fmt.Errorf("%w: %v (key kept for a retry)", ErrUnsettled, err)
		}
		c.observe(Event{Op: op, Key: e.Key, Err: err, Wait: wait, Note: "reading the idempotency policy again"})
		select {
		case <-ctx.Done():
			return Policy{}, ctx.Err()
		case <-time.After(wait):
		}
	}
}

func (c *Client) observe(e Event) {
	if c.Observe != nil {
		c.Observe(e)
	}
}

// GetOrder is GET /api/orders/{id}.
func (c *Client) GetOrder(ctx context.Context, id string) (Order, error) {
	var o Order
	if err := c.getJSON(ctx, "/api/orders/"+url.PathEscape(id), &o); err != nil {
		return Order{}, err
	}
	return o, nil
}

// keyEvent is one entry of GET /api/keys/{key}/events.
type keyEvent struct {
	Event  string `json:"event"`
	Detail struct {
		Status  int    `json:"status"`
		OrderID string `json:"order_id"`
	} `json:"detail"`
}

// reconcile finds out how op ended without sending it again: the key's
// audit trail says whether it finished and with which order. If it has not
// finished, the outcome is open and the error wraps ErrUnsettled; the key
// stays in the store.
func (c *Client) reconcile(ctx context.Context, op string, e Entry, why string) (Order, error) {
	var events []keyEvent
	if err := c.getJSON(ctx, "/api/keys/"+url.PathEscape(e.Key)+"/events", &events); err != nil {
		return Order{}, fmt.Errorf("%w: %s, and reading the key's trail failed: %v", ErrUnsettled, why, err)
	}
	for i := len(events) - 1; i >= 0; i-- {
		ev := events[i]
		if ev.Event != "finished" && ev.Event != "recovered" {
			continue
		}
		if ev.Detail.OrderID == "" {
			return Order{}, &Problem{Status: ev.Detail.Status, Title: "Operation ended without an order",
				Detail: fmt.Sprintf("the key's audit trail says it %s with status %d", ev.Event, ev.Detail.Status)}
		}
		o, err := c.GetOrder(ctx, ev.Detail.OrderID)
		if err != nil {
			return Order{}, fmt.Errorf("%w: %s; the key made order %s but reading it failed: %v", ErrUnsettled, why, ev.Detail.OrderID, err)
		}
		o.Key, o.Reconciled = e.Key, true
		c.observe(Event{Op: op, Key: e.Key, Note: "reconciled: found order " + o.OrderID})
		return o, nil
	}
	names := make([]string, len(events))
	for i, ev := range events {
		names[i] = ev.Event
	}
	return Order{}, fmt.Errorf("%w: %s, and the key's trail [%s] shows no result yet", ErrUnsettled, why, strings.Join(names, " "))
}
