package handlers_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/formkey"
	"exactlyonce/internal/session"
)

// testSecret is the SESSION_SECRET of page tests that need to read a
// session cookie or mint a key themselves.
const testSecret = "page-test-secret, 32 bytes or more"

// goodCard and declinedCard are the fake provider's test cards.
const (
	goodCard     = "4242 4242 4242 4242"
	declinedCard = "4000000000000002"
)

// shopper is apptest.Shopper (a browser without JavaScript, which the
// demo's page tests use too) in these tests' words; page is its Page.
type shopper struct{ *apptest.Shopper }

func newShopper(t testing.TB, h *apptest.Harness) *shopper {
	t.Helper()
	return &shopper{apptest.NewShopper(t, h)}
}

// page is a response parsed as HTML.
type page struct {
	status int
	header http.Header
	doc    *goquery.Document
}

func pageOf(p apptest.Page) page { return page{status: p.Status, header: p.Header, doc: p.Doc} }

func (p page) shown() apptest.Page {
	return apptest.Page{Status: p.status, Header: p.header, Doc: p.doc}
}

func (s *shopper) do(t testing.TB, req *http.Request) page {
	t.Helper()
	return pageOf(s.Do(t, req))
}

func (s *shopper) get(t testing.TB, path string) page {
	t.Helper()
	return pageOf(s.Get(t, path))
}

func (s *shopper) post(t testing.TB, path string, form url.Values) page {
	t.Helper()
	return pageOf(s.Post(t, path, form))
}

// follow loads the page a 303 points to.
func (s *shopper) follow(t testing.TB, p page) page {
	t.Helper()
	return pageOf(s.Follow(t, p.shown()))
}

// id is the shopper's customer id, read from its session cookie.
func (s *shopper) id(t testing.TB) uuid.UUID {
	t.Helper()
	u, _ := url.Parse(s.H.URL)
	r := &http.Request{Header: http.Header{}}
	for _, c := range s.Client.Jar.Cookies(u) {
		r.AddCookie(c)
	}
	id, ok := session.New([]byte(testSecret)).Shopper(r)
	if !ok {
		t.Fatal("no session cookie (did the test set SessionSecret to testSecret?)")
	}
	return id
}

func (s *shopper) addToCart(t testing.TB, sku string) {
	t.Helper()
	s.AddToCart(t, sku)
}

func (s *shopper) checkoutForm(t testing.TB, card string) url.Values {
	t.Helper()
	return s.CheckoutForm(t, card)
}

func (p page) testid(id string) *goquery.Selection { return p.shown().TestID(id) }

func (p page) text(id string) string { return p.shown().Text(id) }

var formValues = apptest.FormValues

func wantErrorPage(t testing.TB, p page, status int) {
	t.Helper()
	apptest.WantErrorPage(t, p.shown(), status)
}

func wantReceipt(t testing.TB, p page) string {
	t.Helper()
	return apptest.WantReceipt(t, p.shown())
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
