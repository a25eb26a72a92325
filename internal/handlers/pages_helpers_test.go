package handlers_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/formkey"
	"exactlyonce/internal/session"
	"exactlyonce/views"
)

// testSecret is the SESSION_SECRET of page tests that need to read a
// session cookie or mint a key themselves.
const testSecret = "page-test-secret, 32 bytes or more"

// goodCard and declinedCard are the fake provider's test cards.
const (
	goodCard     = "4242 4242 4242 4242"
	declinedCard = "4000000000000002"
)

// shopper is a browser without JavaScript: it keeps cookies, sends forms,
// and does not follow redirects on its own, so tests see every 303.
type shopper struct {
	h      *apptest.Harness
	client *http.Client
}

func newShopper(t testing.TB, h *apptest.Harness) *shopper {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &shopper{h: h, client: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// page is a response parsed as HTML.
type page struct {
	status int
	header http.Header
	doc    *goquery.Document
}

func (s *shopper) do(t testing.TB, req *http.Request) page {
	t.Helper()
	resp, err := s.client.Do(req)
	if err != nil {
		// Not Fatalf: some tests send from goroutines.
		t.Errorf("%s %s: %v", req.Method, req.URL.Path, err)
		return page{doc: goquery.NewDocumentFromNode(nil)}
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Errorf("parse %s %s: %v", req.Method, req.URL.Path, err)
	}
	return page{status: resp.StatusCode, header: resp.Header, doc: doc}
}

func (s *shopper) get(t testing.TB, path string) page {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.h.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.do(t, req)
}

func (s *shopper) post(t testing.TB, path string, form url.Values) page {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.h.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return s.do(t, req)
}

// follow loads the page a 303 points to.
func (s *shopper) follow(t testing.TB, p page) page {
	t.Helper()
	if p.status != http.StatusSeeOther {
		t.Fatalf("got status %d (%s), want 303", p.status, p.text("error-message"))
	}
	return s.get(t, p.header.Get("Location"))
}

// id is the shopper's customer id, read from its session cookie.
func (s *shopper) id(t testing.TB) uuid.UUID {
	t.Helper()
	u, _ := url.Parse(s.h.URL)
	r := &http.Request{Header: http.Header{}}
	for _, c := range s.client.Jar.Cookies(u) {
		r.AddCookie(c)
	}
	id, ok := session.New([]byte(testSecret)).Shopper(r)
	if !ok {
		t.Fatal("no session cookie (did the test set SessionSecret to testSecret?)")
	}
	return id
}

// addToCart submits a product's add-to-cart form from the catalog page,
// as a click would.
func (s *shopper) addToCart(t testing.TB, sku string) {
	t.Helper()
	catalog := s.get(t, "/")
	form := catalog.doc.Find(`[data-testid=product][data-sku="` + sku + `"] form[data-testid=add-to-cart]`)
	if form.Length() != 1 {
		t.Fatalf("no add-to-cart form for %s", sku)
	}
	if r := s.post(t, "/cart", formValues(form)); r.status != http.StatusSeeOther {
		t.Fatalf("add %s: got %d, want 303", sku, r.status)
	}
}

// checkoutForm loads /checkout and returns its pay form's values, with the
// card typed in.
func (s *shopper) checkoutForm(t testing.TB, card string) url.Values {
	t.Helper()
	p := s.get(t, "/checkout")
	if p.status != http.StatusOK {
		t.Fatalf("checkout: got %d, want 200", p.status)
	}
	form := p.testid("checkout-form")
	if form.Length() != 1 {
		t.Fatal("no checkout form")
	}
	v := formValues(form)
	v.Set("card", card)
	return v
}

func (p page) testid(id string) *goquery.Selection {
	return p.doc.Find(`[data-testid="` + id + `"]`)
}

func (p page) text(id string) string {
	return strings.TrimSpace(p.testid(id).Text())
}

// formValues collects the named inputs of a form, as a browser submits it.
func formValues(form *goquery.Selection) url.Values {
	v := url.Values{}
	form.Find("input[name]").Each(func(_ int, in *goquery.Selection) {
		name, _ := in.Attr("name")
		value, _ := in.Attr("value")
		v.Add(name, value)
	})
	return v
}

// wantErrorPage fails unless p is the error page with the given status.
func wantErrorPage(t testing.TB, p page, status int) {
	t.Helper()
	if p.status != status {
		t.Errorf("got status %d, want %d", p.status, status)
	}
	e := p.testid("error-page")
	if e.Length() != 1 {
		t.Fatalf("got no error page (status %d)", p.status)
	}
	if got, _ := e.Attr("data-status"); got != strconv.Itoa(status) {
		t.Errorf("error page says status %q, want %d", got, status)
	}
	if p.text("error-message") == "" {
		t.Error("error page without a message")
	}
}

// wantReceipt fails unless p is the receipt of an order and returns its id.
func wantReceipt(t testing.TB, p page) string {
	t.Helper()
	if p.status != http.StatusOK || p.testid("receipt").Length() != 1 {
		t.Fatalf("got status %d and no receipt (%s)", p.status, p.text("error-message"))
	}
	id := p.testid("order-id").AttrOr("data-order-id", "")
	if _, err := uuid.Parse(id); err != nil {
		t.Errorf("receipt order id %q: %v", id, err)
	}
	if got, want := p.text("order-id"), views.OrderNumber(id); got != want {
		t.Errorf("receipt shows order %q, want its short number %q", got, want)
	}
	if p.text("amount") == "" {
		t.Errorf("receipt without an amount")
	}
	return id
}

// wantNothingStored fails unless no key, charge or order exists.
// cartQuantities reads a shopper's open cart from the database; a shopper
// whose cart was ordered has none, which reads as empty.
func cartQuantities(t testing.TB, h *apptest.Harness, id uuid.UUID) map[string]int32 {
	t.Helper()
	out := map[string]int32{}
	open, err := h.DB.OpenBrowserCart(context.Background(), id)
	if errors.Is(err, database.ErrNotFound) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	rows, err := h.DB.CartLines(context.Background(), open.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		out[r.Sku] = r.Quantity
	}
	return out
}

// resign puts key into form with a valid signature for what the form
// shows, as the server would sign it: how a test makes a form whose only
// fault is its key (expired, or not the cart version's).
func resign(t testing.TB, owner uuid.UUID, form url.Values, key string) url.Values {
	t.Helper()
	out := cloneValues(form)
	out.Set("idempotency_key", key)
	b := formkey.Binding{CartID: uuid.MustParse(form.Get("cart_id"))}
	b.CartVersion, _ = strconv.ParseInt(form.Get("cart_version"), 10, 64)
	b.Amount, _ = strconv.ParseInt(form.Get("amount"), 10, 64)
	for i, sku := range form["sku"] {
		q, _ := strconv.Atoi(form["quantity"][i])
		b.Items = append(b.Items, catalog.Item{SKU: sku, Quantity: q})
	}
	out.Set("key_sig", formkey.New([]byte(testSecret), time.Hour).Sign(owner, key, b))
	return out
}

// The bodies of the API requests some page tests send.
const (
	oneMug  = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`
	twoMugs = `{"items":[{"sku":"mug-espresso","quantity":2},{"sku":"book-retries","quantity":1}]}`
)
