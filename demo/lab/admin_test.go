package lab_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"exactlyonce/internal/apptest"
)

// serveAdmin serves h's admin listener for the test and returns its URL.
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

// get fetches url over HTTP and returns its status and body.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, b
}

// adminPage fetches url, wanting 200, and parses it.
func adminPage(t *testing.T, url string) *goquery.Document {
	t.Helper()
	status, body := get(t, url)
	if status != http.StatusOK {
		t.Fatalf("GET %s: got %d %s, want 200", url, status, body)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// With the lab mounted, the admin listener's index links the key
// inspector on the shop, and the link answers.
func TestAdminIndexLinksTheInspector(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab)
	doc := adminPage(t, serveAdmin(t, h)+"/")
	href, _ := doc.Find(`[data-testid="admin-link"] h2 a[href$="/lab#inspector"]`).Attr("href")
	if href != h.URL+"/lab#inspector" {
		t.Fatalf("key inspector: got link %q, want %s/lab#inspector", href, h.URL)
	}
	if status, body := get(t, href); status != http.StatusOK {
		t.Errorf("key inspector: got %d %.200s, want 200", status, body)
	}
}

// A shop listening on every address (ADDR=:8080) has a BaseURL no browser
// opens (http://[::]:8080): the index links the key inspector by the host
// the operator reached the admin listener by, with the shop's port.
func TestAdminIndexLinksTheInspectorOnEveryAddress(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withLab, func(c *apptest.Setup) { c.BaseURL = "http://[::]:8080" })
	doc := adminPage(t, serveAdmin(t, h)+"/")
	href, _ := doc.Find(`a[href$="/lab#inspector"]`).Attr("href")
	if want := "http://127.0.0.1:8080/lab#inspector"; href != want {
		t.Errorf("key inspector: got %q, want %q", href, want)
	}
}

// Each caught confirmation links to its order: the receipt on the shop,
// and for a lab run's shopper the key inspector, which shows that shopper.
func TestAdminMailLinksToTheInspector(t *testing.T) {
	t.Parallel()
	withCatcher, _ := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher, withLab)
	h.StartJobs(t)
	c := h.NewCustomer(t)
	r := h.PlaceOrder(t, c, "k", oneMug)
	if r.Status != http.StatusCreated {
		t.Fatalf("place order: got %d %s", r.Status, r.Body)
	}
	var order struct {
		ID string `json:"order_id"`
	}
	r.JSON(t, &order)
	ran, err := labOf(h).Run(t.Context(), "double-click")
	if err != nil {
		t.Fatal(err)
	}
	base := serveAdmin(t, h)
	var doc *goquery.Document
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		doc = adminPage(t, base+"/mail")
		if doc.Find(`[data-testid="mail"]`).Length() >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d mails after 20 s, want 2", doc.Find(`[data-testid="mail"]`).Length())
		}
	}
	receipts := map[string]bool{}
	doc.Find(`[data-testid="mail-receipt"]`).Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		receipts[href] = true
	})
	if want := h.URL + "/orders/" + order.ID; !receipts[want] {
		t.Errorf("got receipt links %v, want %s", receipts, want)
	}
	// Only the lab shopper's mails link the key inspector, to that shopper.
	doc.Find(`[data-testid="mail"]`).Each(func(_ int, m *goquery.Selection) {
		receipt, _ := m.Find(`[data-testid="mail-receipt"]`).Attr("href")
		inspector, linked := m.Find(`[data-testid="mail-inspector"]`).Attr("href")
		switch {
		case receipt == h.URL+"/orders/"+order.ID && linked:
			t.Errorf("the API customer's mail links the key inspector (%s), want no link", inspector)
		case receipt != h.URL+"/orders/"+order.ID && !linked:
			t.Errorf("the lab shopper's mail (%s) links no key inspector", receipt)
		case linked:
			status, body := get(t, inspector)
			if status != http.StatusOK || !bytes.Contains(body, []byte("customer="+ran.CustomerID.String())) {
				t.Errorf("key inspector %s: got %d, want 200 showing shopper %s", inspector, status, ran.CustomerID)
			}
		}
	})
}
