package app_test

import (
	"bytes"
	"exactlyonce/internal/lab"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"exactlyonce/internal/apptest"
)

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

// page fetches url, wanting 200, and parses it.
func page(t *testing.T, url string) *goquery.Document {
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

// withCatcher has the admin listener show the test's mail catcher, to
// which the confirmations go.
func withCatcher(t *testing.T) apptest.Option {
	t.Helper()
	sendTo, _ := apptest.WithMailCatcher(t)
	return sendTo
}

// The admin listener's / links every operator page, on this listener or
// the shop's, and every link answers 200 over real HTTP.
func TestAdminIndexLinksAnswer(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withCatcher(t), func(c *apptest.Setup) { c.Demo = &lab.Demo{} })
	base := serveAdmin(t, h)
	doc := page(t, base+"/")
	want := map[string]bool{"/readyz": false, "/metrics": false, "/riverui/": false, "/mail": false, "/traces": false, "/payments": false,
		"/debug/pprof/": false, h.URL + "/lab#inspector": false}
	links := doc.Find(`[data-testid="admin-link"] h2 a`)
	if links.Length() != len(want) {
		t.Errorf("got %d links, want %d", links.Length(), len(want))
	}
	links.Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		if _, ok := want[href]; !ok {
			t.Errorf("got a link to %q, want only %v", href, want)
		}
		want[href] = true
		u, err := url.Parse(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		target, err := u.Parse(href)
		if err != nil {
			t.Fatal(err)
		}
		if status, body := get(t, target.String()); status != http.StatusOK {
			t.Errorf("%s (%s): got %d %.200s, want 200", a.Text(), target, status, body)
		}
	})
	for href, seen := range want {
		if !seen {
			t.Errorf("no link to %s", href)
		}
	}
	if status, _ := get(t, base+"/no-such-page"); status != http.StatusNotFound {
		t.Errorf("another path: got %d, want 404", status)
	}
}

// Without the lab (no demo) the index still names the key inspector, says
// where it is, and links nowhere that would 404.
func TestAdminIndexWithoutLab(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	doc := page(t, serveAdmin(t, h)+"/")
	var inspector *goquery.Selection
	doc.Find(`[data-testid="admin-link"]`).Each(func(_ int, s *goquery.Selection) {
		if strings.TrimSpace(s.Find("h2").Text()) == "Key inspector" {
			inspector = s
		}
	})
	if inspector == nil || inspector.Find("a").Length() != 0 || !strings.Contains(inspector.Text(), "DEMO=1") {
		t.Errorf("key inspector without the lab: got %v, want an entry without a link that names DEMO=1", inspector)
	}
	if doc.Find(`a[href="/mail"]`).Length() != 0 {
		t.Error("got a link to /mail without a mail catcher, want none")
	}
}

// Each caught confirmation links to its order: the receipt on the shop,
// and for a lab run's shopper the key inspector, which shows that shopper.
func TestAdminMailLinksToOrder(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withCatcher(t), func(c *apptest.Setup) { c.Demo = &lab.Demo{} })
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
	run, err := h.App.Demo.(*lab.Demo).Runner.Run(t.Context(), "double-click")
	if err != nil {
		t.Fatal(err)
	}
	base := serveAdmin(t, h)
	var doc *goquery.Document
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		doc = page(t, base+"/mail")
		if doc.Find(`[data-testid="mail"]`).Length() >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d mails after 20 s, want 2", doc.Find(`[data-testid="mail"]`).Length())
		}
	}
	if doc.Find(`link[rel="stylesheet"]`).Length() != 1 {
		t.Error("/mail links no stylesheet, want admin.css")
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
			if status != http.StatusOK || !bytes.Contains(body, []byte("customer="+run.CustomerID.String())) {
				t.Errorf("key inspector %s: got %d, want 200 showing shopper %s", inspector, status, run.CustomerID)
			}
		}
	})
}

// A shop listening on every address (ADDR=:8080) has a BaseURL no browser
// opens (http://[::]:8080): the index links the shop by the host the
// operator reached the admin listener by, with the shop's port.
func TestAdminIndexLinksAShopOnEveryAddress(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(c *apptest.Setup) { c.BaseURL, c.Demo = "http://[::]:8080", &lab.Demo{} })
	doc := page(t, serveAdmin(t, h)+"/")
	href, _ := doc.Find(`a[href$="/lab#inspector"]`).Attr("href")
	if want := "http://127.0.0.1:8080/lab#inspector"; href != want {
		t.Errorf("key inspector: got %q, want %q", href, want)
	}
}
