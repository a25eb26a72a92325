package browsertest_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"exactlyonce/internal/apptest"
)

// serveAdmin serves h's admin listener on loopback until the test ends and
// returns its base URL.
func serveAdmin(t *testing.T, h *apptest.Harness) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.App.ServeAdmin(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("admin server: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// The operator's pages fit a desktop and a phone: the admin index, the
// caught mail with a browser order's confirmation, the latest traces and
// the browser order's trace, and a problem type's page. The mail's receipt
// link opens that order's receipt in the browser that placed it.
func TestOperatorPagesFit(t *testing.T) {
	sendTo, catcher := apptest.WithMailCatcher(t)
	// Traced as `web` is: its statements are spans too, so the order's
	// trace shows them under the phases that sent them.
	h := apptest.NewTraced(t, apptest.DefaultTracing(), sendTo)
	h.StartJobs(t)
	admin := serveAdmin(t, h)
	ctx := newBrowser(t)

	shopToCheckout(t, ctx, h)
	do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	waitForReceipt(t, ctx, "")
	receipt := run(t, ctx, "receipt path", chromedp.Evaluate[string](`location.pathname`))
	h.WaitCount(t, 1, `SELECT count(*) FROM sent_mails`)
	for deadline := time.Now().Add(10 * time.Second); len(catcher.Messages()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no mail in the catcher 10 s after it was sent")
		}
	}

	orderID := strings.TrimPrefix(receipt, "/orders/")
	pages := []struct{ name, url, ready, shot string }{
		{"find an order", admin + "/orders", `document.querySelector('[data-testid=attention]')`, "admin-find.png"},
		{"an order", admin + "/orders/" + orderID, `document.querySelector('[data-testid=order-trail]')`, "admin-order.png"},
		{"admin index", admin + "/", `document.querySelector('[data-testid=admin-links]')`, "admin-index.png"},
		{"caught mail", admin + "/mail", `document.querySelector('[data-testid=mail-receipt]')`, "admin-mail.png"},
		{"traces", admin + "/traces", `document.querySelector('[data-testid=trace]')`, "admin-traces.png"},
		{"a trace", admin + "/traces/" + checkoutTrace(t, h), `document.querySelector('[data-testid=spans]')`, "admin-trace.png"},
		{"problem page", h.URL + "/problems/request-in-progress", `document.querySelector('[data-testid=problem-do]')`, "problem-page.png"},
	}
	for _, s := range shopScreens {
		atSize(t, ctx, s)
		for _, p := range pages {
			do(t, ctx, "open "+p.name, chromedp.Navigate(p.url))
			waitFor(t, ctx, p.name, p.ready)
			wantFits(t, ctx, p.name, s)
			if s == desktop {
				screenshot(t, ctx, p.shot, p.shot)
			}
		}
	}

	do(t, ctx, "open the caught mail", chromedp.Navigate(admin+"/mail"))
	waitFor(t, ctx, "caught mail", `document.querySelector('[data-testid=mail-receipt]')`)
	do(t, ctx, "follow the receipt link", chromedp.Click(chromedp.CSS(`[data-testid=mail-receipt]`)))
	waitForReceipt(t, ctx, "")
	if got := run(t, ctx, "receipt path", chromedp.Evaluate[string](`location.pathname`)); got != receipt {
		t.Errorf("the mail's receipt link opened %s, want the order's receipt %s", got, receipt)
	}
}

// An operator finds the browser's order on the admin listener from each
// thing its shopper may quote — the number on the receipt, the order's id,
// the PaymentIntent, the customer's id, the mail's address — typed into
// "Find an order", and follows the result to the order's page.
func TestOperatorFindsAnOrderInTheBrowser(t *testing.T) {
	h := apptest.New(t)
	admin := serveAdmin(t, h)
	ctx := newBrowser(t)
	shopToCheckout(t, ctx, h)
	do(t, ctx, "pay", chromedp.Click(chromedp.CSS(`[data-testid=pay]`)))
	waitForReceipt(t, ctx, "")
	orderID := strings.TrimPrefix(run(t, ctx, "receipt path", chromedp.Evaluate[string](`location.pathname`)), "/orders/")
	number := run(t, ctx, "the receipt's number", chromedp.Evaluate[string](`document.querySelector('[data-testid=order-id]')?.textContent.trim() ?? ''`))
	var intent, customer string
	if err := h.DB.Pool.QueryRow(context.Background(), `SELECT charge_id, customer_id::text FROM orders WHERE id = $1`, orderID).Scan(&intent, &customer); err != nil {
		t.Fatal(err)
	}
	if number == "" {
		t.Fatal("the receipt shows no order number")
	}
	for name, q := range map[string]string{"number": number, "order id": orderID, "PaymentIntent": intent,
		"customer id": customer, "mail address": "customer-" + customer + "@exactlyonce.test"} {
		do(t, ctx, "open Find an order", chromedp.Navigate(admin+"/orders"))
		do(t, ctx, "type the "+name, chromedp.SendKeys(chromedp.CSS(`input[name=q]`), q))
		do(t, ctx, "Find", chromedp.Click(chromedp.CSS(`form[role=search] button`)))
		waitFor(t, ctx, name+" found", `document.querySelector('[data-testid=order-link]')`)
		do(t, ctx, "follow the "+name+"'s result", chromedp.Click(chromedp.CSS(`[data-testid=order-link]`)))
		waitFor(t, ctx, name+": the order's page", `document.querySelector('[data-testid=order-id]')`)
		if got := run(t, ctx, "order id", chromedp.Evaluate[string](`document.querySelector('[data-testid=order-id]').textContent`)); got != orderID {
			t.Errorf("%s %q: found order %s, want %s", name, q, got, orderID)
		}
	}
}

// checkoutTrace is the id of the trace of the browser's order, the latest
// POST /checkout the application keeps.
func checkoutTrace(t *testing.T, h *apptest.Harness) string {
	t.Helper()
	for _, tr := range h.App.Tracing.Recent.Latest(100) {
		if tr.Root == "POST /checkout" {
			return tr.ID.String()
		}
	}
	t.Fatal("no trace of POST /checkout kept")
	return ""
}
