package app_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
)

// adminPost sends the admin listener a form, as the operator's browser
// would, with the credential when token is set.
func adminPost(t *testing.T, h *apptest.Harness, path string, form url.Values, token string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if token != "" {
		req.SetBasicAuth("operator", token)
	}
	w := httptest.NewRecorder()
	h.App.Admin().ServeHTTP(w, req)
	return w
}

// refundForm reads the refund form of an order's admin page.
func refundForm(t *testing.T, h *apptest.Harness, order string) (string, url.Values) {
	t.Helper()
	page := h.Admin(t, "/orders/"+order)
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(page.Body))
	if err != nil {
		t.Fatal(err)
	}
	form := doc.Find(`form[data-testid=refund-form]`)
	if form.Length() != 1 {
		t.Fatalf("the order's admin page has no refund form")
	}
	action, _ := form.Attr("action")
	return action, apptest.FormValues(form)
}

// An operator refunds part of an order from its admin page: without the
// credential nothing happens; with it, one refund, and the same form sent
// again (a double click, a resubmit) is the stored answer replayed, never a
// second refund. A refund of more than is left is refused and stores
// nothing, so the same form, corrected, still works; the order's page then
// lists the refund.
func TestOperatorRefundsPartOfAnOrder(t *testing.T) {
	t.Parallel()
	const token = "operator-token-for-the-test"
	h := apptest.New(t, apptest.WithoutWebhooks, func(c *apptest.Setup) { c.AdminToken = token })
	c := h.NewCustomer(t)
	placed := h.PlaceOrder(t, c, uuid.NewString(), `{"items":[{"sku":"mug-espresso","quantity":1}],"card":"4242 4242 4242 4242"}`)
	var o struct {
		OrderID string `json:"order_id"`
		Amount  int64  `json:"amount"`
	}
	placed.JSON(t, &o)
	action, form := refundForm(t, h, o.OrderID)
	form.Set("amount", "1.00")
	form.Set("reason", "a chipped handle")

	if w := adminPost(t, h, action, form, ""); w.Code != http.StatusUnauthorized {
		t.Errorf("without the credential: got %d, want 401", w.Code)
	}
	if w := adminPost(t, h, action, form, "wrong"); w.Code != http.StatusUnauthorized {
		t.Errorf("with a wrong credential: got %d, want 401", w.Code)
	}
	tooMuch := url.Values{}
	for k, v := range form {
		tooMuch[k] = v
	}
	tooMuch.Set("amount", "100000.00")
	if w := adminPost(t, h, action, tooMuch, token); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "left to refund") {
		t.Errorf("more than the order: got %d %q, want 409 saying what is left", w.Code, w.Body.String())
	}
	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad.Set("amount", "1,5")
	if w := adminPost(t, h, action, bad, token); w.Code != http.StatusBadRequest {
		t.Errorf("an amount that is no amount: got %d, want 400", w.Code)
	}
	first := adminPost(t, h, action, form, token)
	if first.Code != http.StatusSeeOther || first.Header().Get("Location") != "/orders/"+o.OrderID+"?refund=refunded" {
		t.Fatalf("the refund: got %d to %q %s, want 303 to the order's page", first.Code, first.Header().Get("Location"), first.Body)
	}
	again := adminPost(t, h, action, form, token)
	if again.Code != http.StatusSeeOther || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("the same form again: got %d (replayed %q), want the stored 303 replayed", again.Code, again.Header().Get("Idempotent-Replayed"))
	}
	if got := h.Count(t, `SELECT coalesce(sum(amount), 0)::bigint FROM fakestripe.refunds`); got != 100 {
		t.Errorf("refunded at the provider: %d, want 100", got)
	}
	if got := h.Count(t, `SELECT count(*) FROM order_refunds WHERE state = 'refunded' AND reason = 'a chipped handle'`); got != 1 {
		t.Errorf("refunds recorded: %d, want 1", got)
	}
	page := h.Admin(t, "/orders/"+o.OrderID+"?refund=refunded")
	if !bytes.Contains(page.Body, []byte(`data-testid="refund-done"`)) || !bytes.Contains(page.Body, []byte(`data-testid="order-refund"`)) {
		t.Errorf("the order's admin page does not show the refund")
	}
}

// Without an operator credential configured, the admin listener refunds
// nothing, whoever reaches it: a configuration cannot be unsafe by omission.
func TestNoRefundsWithoutAnOperatorCredential(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, apptest.WithoutWebhooks)
	c := h.NewCustomer(t)
	placed := h.PlaceOrder(t, c, uuid.NewString(), `{"items":[{"sku":"mug-espresso","quantity":1}],"card":"4242 4242 4242 4242"}`)
	var o struct {
		OrderID string `json:"order_id"`
	}
	placed.JSON(t, &o)
	action, form := refundForm(t, h, o.OrderID)
	form.Set("amount", "1.00")
	if w := adminPost(t, h, action, form, ""); w.Code != http.StatusForbidden {
		t.Errorf("got %d, want 403", w.Code)
	}
	if got := h.Count(t, `SELECT count(*) FROM fakestripe.refunds`); got != 0 {
		t.Errorf("refunds at the provider: %d, want none", got)
	}
}
