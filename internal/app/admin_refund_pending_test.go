package app_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"exactlyonce/fakestripe"
	"exactlyonce/idem"
	"exactlyonce/internal/apptest"
)

// refundFormKey finds the key fields of the admin order page's refund form.
var refundFormKey = regexp.MustCompile(`name="` + idem.KeyField + `" value="([^"]+)"[^>]*><input type="hidden" name="` + idem.SigField + `" value="([^"]+)"`)

// An operator's refund whose provider answer was lost is answered 503 with
// a Retry-After, as every outage's answer is (the chaos harness holds every
// 503 to it): the form sent again after it resumes the refund and ends
// with the 303. Found by the chaos run's operator clients: the admin
// listener wrote the 503 without it.
func TestAdminRefundPendingSaysWhenToComeBack(t *testing.T) {
	h := apptest.New(t, apptest.WithoutWebhooks, func(c *apptest.Setup) { c.AdminToken = adminToken })
	c := h.NewCustomer(t)
	r := h.PlaceOrder(t, c, "order-1", `{"items":[{"sku":"mug-espresso","quantity":2}],"card":"4242 4242 4242 4242"}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("place order: %d %s", r.Status, r.Body)
	}
	var o struct {
		OrderID string `json:"order_id"`
	}
	r.JSON(t, &o)
	base := serveAdmin(t, h)
	page, err := http.Get(base + "/orders/" + o.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	m := refundFormKey.FindSubmatch(body)
	if m == nil {
		t.Fatalf("no refund form on the order's page: %d %s", page.StatusCode, body)
	}
	form := url.Values{"amount": {"1.50"}, idem.KeyField: {string(m[1])}, idem.SigField: {string(m[2])}}.Encode()
	if err := h.Provider.SetBehaviour(fakestripe.Behaviour{Refunds: fakestripe.RefundFaults{Fail: fakestripe.FaultAfterCharge, Times: 1}}); err != nil {
		t.Fatal(err)
	}
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func() (int, http.Header) {
		req, err := http.NewRequest(http.MethodPost, base+"/orders/"+o.OrderID+"/refunds", strings.NewReader(form))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body) //nolint:errcheck // the status and headers are the test
		return resp.StatusCode, resp.Header
	}
	if status, header := post(); status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" {
		t.Fatalf("the refund whose answer was lost: %d, Retry-After %q; want 503 with a Retry-After", status, header.Get("Retry-After"))
	}
	if status, header := post(); status != http.StatusSeeOther || !strings.HasSuffix(header.Get("Location"), "refund=refunded") {
		t.Fatalf("the form sent again: %d to %q, want 303 to ?refund=refunded", status, header.Get("Location"))
	}
}
