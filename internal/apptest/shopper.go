package apptest

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"exactlyonce/views"
)

// Shopper is a browser without JavaScript: it keeps cookies, sends forms,
// and does not follow redirects on its own, so tests see every 303. It is
// here, not in a _test file, because the page tests of two modules use it:
// the shop's (internal/handlers) and the demo's (demo/lab).
type Shopper struct {
	H      *Harness
	Client *http.Client
}

// NewShopper is a shopper with an empty cookie jar.
func NewShopper(t testing.TB, h *Harness) *Shopper {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Shopper{H: h, Client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Page is a response parsed as HTML.
type Page struct {
	Status int
	Header http.Header
	Doc    *goquery.Document
}

// Do sends req and parses the answer.
func (s *Shopper) Do(t testing.TB, req *http.Request) Page {
	t.Helper()
	resp, err := s.Client.Do(req)
	if err != nil {
		// Not Fatalf: some tests send from goroutines.
		t.Errorf("%s %s: %v", req.Method, req.URL.Path, err)
		return Page{Doc: goquery.NewDocumentFromNode(nil)}
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Errorf("parse %s %s: %v", req.Method, req.URL.Path, err)
	}
	return Page{Status: resp.StatusCode, Header: resp.Header, Doc: doc}
}

// Get loads the page at path.
func (s *Shopper) Get(t testing.TB, path string) Page {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.H.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.Do(t, req)
}

// Post sends form to path, as a browser submits a form.
func (s *Shopper) Post(t testing.TB, path string, form url.Values) Page {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.H.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return s.Do(t, req)
}

// Follow loads the page a 303 points to.
func (s *Shopper) Follow(t testing.TB, p Page) Page {
	t.Helper()
	if p.Status != http.StatusSeeOther {
		t.Fatalf("got status %d (%s), want 303", p.Status, p.Text("error-message"))
	}
	return s.Get(t, p.Header.Get("Location"))
}

// AddToCart submits a product's add-to-cart form from the catalog page,
// as a click would.
func (s *Shopper) AddToCart(t testing.TB, sku string) {
	t.Helper()
	catalog := s.Get(t, "/")
	form := catalog.Doc.Find(`[data-testid=product][data-sku="` + sku + `"] form[data-testid=add-to-cart]`)
	if form.Length() != 1 {
		t.Fatalf("no add-to-cart form for %s", sku)
	}
	if r := s.Post(t, "/cart", FormValues(form)); r.Status != http.StatusSeeOther {
		t.Fatalf("add %s: got %d, want 303", sku, r.Status)
	}
}

// CheckoutForm loads /checkout and returns its pay form's values, with the
// card typed in.
func (s *Shopper) CheckoutForm(t testing.TB, card string) url.Values {
	t.Helper()
	p := s.Get(t, "/checkout")
	if p.Status != http.StatusOK {
		t.Fatalf("checkout: got %d, want 200", p.Status)
	}
	form := p.TestID("checkout-form")
	if form.Length() != 1 {
		t.Fatal("no checkout form")
	}
	v := FormValues(form)
	v.Set("card", card)
	return v
}

// TestID finds the elements whose data-testid is id.
func (p Page) TestID(id string) *goquery.Selection {
	return p.Doc.Find(`[data-testid="` + id + `"]`)
}

// Text is the trimmed text of the elements whose data-testid is id.
func (p Page) Text(id string) string {
	return strings.TrimSpace(p.TestID(id).Text())
}

// FormValues collects the named inputs of a form, as a browser submits it.
func FormValues(form *goquery.Selection) url.Values {
	v := url.Values{}
	form.Find("input[name]").Each(func(_ int, in *goquery.Selection) {
		name, _ := in.Attr("name")
		value, _ := in.Attr("value")
		v.Add(name, value)
	})
	return v
}

// WantErrorPage fails unless p is the error page with the given status.
func WantErrorPage(t testing.TB, p Page, status int) {
	t.Helper()
	if p.Status != status {
		t.Errorf("got status %d, want %d", p.Status, status)
	}
	e := p.TestID("error-page")
	if e.Length() != 1 {
		t.Fatalf("got no error page (status %d)", p.Status)
	}
	if got, _ := e.Attr("data-status"); got != strconv.Itoa(status) {
		t.Errorf("error page says status %q, want %d", got, status)
	}
	if p.Text("error-message") == "" {
		t.Error("error page without a message")
	}
}

// WantReceipt fails unless p is the receipt of an order and returns its id.
func WantReceipt(t testing.TB, p Page) string {
	t.Helper()
	if p.Status != http.StatusOK || p.TestID("receipt").Length() != 1 {
		t.Fatalf("got status %d and no receipt (%s)", p.Status, p.Text("error-message"))
	}
	id := p.TestID("order-id").AttrOr("data-order-id", "")
	if _, err := uuid.Parse(id); err != nil {
		t.Errorf("receipt order id %q: %v", id, err)
	}
	if got, want := p.Text("order-id"), views.OrderNumber(id); got != want {
		t.Errorf("receipt shows order %q, want its short number %q", got, want)
	}
	if p.Text("amount") == "" {
		t.Errorf("receipt without an amount")
	}
	return id
}
