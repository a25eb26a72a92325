package app_test

import (
	"bytes"
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
// the shop's, and every link answers 200 over real HTTP. (With the lab
// mounted it also links the key inspector: the demo's tests, demo/lab.)
func TestAdminIndexLinksAnswer(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withCatcher(t))
	base := serveAdmin(t, h)
	doc := page(t, base+"/")
	want := map[string]bool{"/readyz": false, "/metrics": false, "/riverui/": false, "/mail": false, "/traces": false, "/payments": false, "/orders": false,
		"/debug/pprof/": false}
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

// Each caught confirmation links to its order's receipt on the shop, and,
// without the lab, to nothing else (the demo's tests, demo/lab, check the
// lab shopper's link to the key inspector).
func TestAdminMailLinksToOrder(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withCatcher(t))
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
	base := serveAdmin(t, h)
	var doc *goquery.Document
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		doc = page(t, base+"/mail")
		if doc.Find(`[data-testid="mail"]`).Length() >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("got no mail after 20 s, want 1")
		}
	}
	if doc.Find(`link[rel="stylesheet"]`).Length() != 1 {
		t.Error("/mail links no stylesheet, want admin.css")
	}
	if href, _ := doc.Find(`[data-testid="mail-receipt"]`).Attr("href"); href != h.URL+"/orders/"+order.ID {
		t.Errorf("got receipt link %q, want %s", href, h.URL+"/orders/"+order.ID)
	}
	if n := doc.Find(`[data-testid="mail-inspector"]`).Length(); n != 0 {
		t.Errorf("got %d key inspector links without the lab, want none", n)
	}
}

// A shop listening on every address (ADDR=:8080) has a BaseURL no browser
// opens (http://[::]:8080): the index links the shop by the host the
// operator reached the admin listener by, with the shop's port.
func TestAdminIndexLinksAShopOnEveryAddress(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(c *apptest.Setup) { c.BaseURL = "http://[::]:8080" })
	doc := page(t, serveAdmin(t, h)+"/")
	if want := "http://127.0.0.1:8080"; doc.Find(`a[href="`+want+`"]`).Length() != 1 {
		t.Errorf("got no link to the shop at %s", want)
	}
}
