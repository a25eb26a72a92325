package app_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/views"
)

// TestOperatorFindsAnOrder: from each thing a customer may quote — the
// order's number with or without "#" and in either case, its whole id, the
// PaymentIntent, the customer's id, the mail's address, part of the
// customer's name — /orders on the admin listener finds the order and
// links its page, which shows the key, the key's trail and the payment.
func TestOperatorFindsAnOrder(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	r := h.Do(t, http.MethodPost, "/api/customers", `{"name":"Grace Hopper"}`)
	var c apptest.Customer
	r.JSON(t, &c)
	placed := h.PlaceOrder(t, c, "quoted-key", oneMug)
	if placed.Status != http.StatusCreated {
		t.Fatalf("place order: got %d %s", placed.Status, placed.Body)
	}
	var order struct {
		ID       string `json:"order_id"`
		ChargeID string `json:"charge_id"`
	}
	placed.JSON(t, &order)
	other := h.NewCustomer(t) // an order that must not be found
	if r := h.PlaceOrder(t, other, "other-key", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("place other order: got %d %s", r.Status, r.Body)
	}
	customer := c.ID.String()
	number := views.OrderNumber(order.ID)
	base := serveAdmin(t, h)

	for name, q := range map[string]string{
		"number":         number,
		"number bare":    strings.TrimPrefix(number, "#"),
		"number lower":   strings.ToLower(number),
		"order id":       order.ID,
		"order id UPPER": strings.ToUpper(order.ID),
		"intent":         order.ChargeID,
		"customer id":    customer,
		"mail address":   "customer-" + customer + "@exactlyonce.test",
	} {
		doc := page(t, base+"/orders?q="+url.QueryEscape(q))
		links := doc.Find(`[data-testid="found-order"] [data-testid="order-link"]`)
		if href, _ := links.Attr("href"); links.Length() != 1 || href != "/orders/"+order.ID {
			t.Errorf("%s (%q): got %d orders, first %q (%s); want the one, /orders/%s",
				name, q, links.Length(), href, doc.Find(`[data-testid="find-said"]`).Text(), order.ID)
		}
	}
	doc := page(t, base+"/orders?q=hopper")
	if got := doc.Find(`[data-testid="found-customer"]`).Length(); got != 1 {
		t.Errorf("name: got %d customers, want Grace Hopper alone", got)
	}
	doc = page(t, base+"/orders?q=%23DEADBEEF")
	if said := doc.Find(`[data-testid="find-said"]`).Text(); !strings.HasPrefix(said, "No order") {
		t.Errorf("unknown number: got %q, want it to say nothing was found", said)
	}

	doc = page(t, base+"/orders/"+order.ID)
	for id, want := range map[string]string{
		"order-number": number, "order-id": order.ID, "order-intent": order.ChargeID, "order-key-value": "quoted-key",
	} {
		if got := strings.TrimSpace(doc.Find(`[data-testid="` + id + `"]`).Text()); got != want {
			t.Errorf("order page %s: got %q, want %q", id, got, want)
		}
	}
	if n := doc.Find(`[data-testid="order-trail"] tbody tr`).Length(); n < 2 {
		t.Errorf("order page: got %d trail events, want the claim and the finish at least", n)
	}
	if href, _ := doc.Find(`[data-testid="order-traces"]`).Attr("href"); !strings.Contains(href, "key=quoted-key") {
		t.Errorf("order page: got traces link %q, want the key's", href)
	}
	if status, _ := get(t, base+"/orders/"+"0190a0a0-0000-7000-8000-000000000000"); status != http.StatusNotFound {
		t.Errorf("unknown order: got %d, want 404", status)
	}
}

// TestOperatorFindsAKeyWithoutAnOrder: a declined payment's PaymentIntent
// names no order; /orders finds the key whose operation made it.
func TestOperatorFindsAKeyWithoutAnOrder(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	r := h.PlaceOrder(t, c, "declined-key", `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "4000000000000002"}`)
	var declined struct {
		ChargeID string `json:"charge_id"`
	}
	r.JSON(t, &declined)
	if declined.ChargeID == "" {
		t.Fatalf("decline: got %d %s, want a charge_id", r.Status, r.Body)
	}
	doc := page(t, serveAdmin(t, h)+"/orders?q="+declined.ChargeID)
	key := doc.Find(`[data-testid="found-key"]`)
	if key.Length() != 1 || !strings.Contains(key.Text(), "declined-key") || !strings.Contains(key.Text(), "402") {
		t.Errorf("got %q, want the declined key and its 402", key.Text())
	}
}
