package loadtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// Shop drives a running shop over HTTP, on loopback only.
type Shop struct {
	base   string
	client *http.Client
	sku    string
	// per worker
	tokens    []string
	customers []string
	replayKey []string
	shoppers  []*http.Client
	buyers    []buyer
}

// buyer is a browser without JavaScript that buys through the pages: the
// catalog's add-to-cart form (its values kept from the first visit), the
// checkout page, its pay form, the receipt.
type buyer struct {
	client *http.Client
	add    url.Values
}

// Customer is an API customer made for a run.
type Customer struct{ ID, Token string }

// NewShop checks that base is a loopback http:// URL and returns a client of
// it sized for clients concurrent workers.
func NewShop(base string, clients int) (*Shop, error) {
	base, err := loopback(base)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		MaxIdleConns: clients * 2, MaxIdleConnsPerHost: clients * 2, IdleConnTimeout: time.Minute,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}
	return &Shop{base: base, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}, nil
}

// loopback checks that base is an http:// URL of a loopback address: the
// load test loads nothing else.
func loopback(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" {
		return "", fmt.Errorf("loadtest: want an http:// base URL, got %q", base)
	}
	ip := net.ParseIP(u.Hostname())
	if !(u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback())) {
		return "", fmt.Errorf("loadtest: refusing to load %s: loopback addresses only", u.Host)
	}
	return strings.TrimRight(base, "/"), nil
}

// Setup makes one API customer per worker, finds a product, places one order
// per worker whose key the replay leg resends, and makes one browser shopper
// per worker with that product in its cart.
func (s *Shop) Setup(ctx context.Context, workers int) error {
	var products []struct {
		SKU string `json:"sku"`
	}
	if err := s.getJSON(ctx, "/api/products", &products); err != nil {
		return err
	}
	if len(products) == 0 {
		return errors.New("loadtest: the shop lists no products")
	}
	s.sku = products[0].SKU
	for w := range workers {
		c, err := s.NewCustomer(ctx)
		if err != nil {
			return err
		}
		s.customers = append(s.customers, c.ID)
		s.tokens = append(s.tokens, c.Token)
		key := "replay-" + rand.Text()
		if err := s.order(ctx, w, key, http.StatusCreated, false); err != nil {
			return fmt.Errorf("first order of the replay key: %w", err)
		}
		s.replayKey = append(s.replayKey, key)
		shopper, _, err := s.newShopper(ctx)
		if err != nil {
			return err
		}
		s.shoppers = append(s.shoppers, shopper)
		client, add, err := s.newShopper(ctx)
		if err != nil {
			return err
		}
		s.buyers = append(s.buyers, buyer{client: client, add: add})
	}
	return nil
}

// Customer returns worker w's API customer and the key its replays resend.
func (s *Shop) Customer(w int) (id, token, replayKey string) {
	return s.customers[w], s.tokens[w], s.replayKey[w]
}

// NewCustomer registers an API customer.
func (s *Shop) NewCustomer(ctx context.Context) (Customer, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/api/customers", strings.NewReader(`{"name":"loadtest"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return Customer{}, err
	}
	defer resp.Body.Close()
	var c Customer
	var body struct{ ID, Token string }
	if resp.StatusCode != http.StatusCreated {
		return c, fmt.Errorf("POST /api/customers: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return c, err
	}
	return Customer{ID: body.ID, Token: body.Token}, nil
}

// NewOrder places an order under a fresh key: 201 expected.
func (s *Shop) NewOrder(ctx context.Context, w int) error {
	return s.order(ctx, w, "lt-"+rand.Text(), http.StatusCreated, false)
}

// Replay resends worker w's placed order under its key: a 201 replay expected.
func (s *Shop) Replay(ctx context.Context, w int) error {
	return s.order(ctx, w, s.replayKey[w], http.StatusCreated, true)
}

func (s *Shop) order(ctx context.Context, w int, key string, want int, replay bool) error {
	body := `{"items":[{"sku":"` + s.sku + `","quantity":1}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/api/orders", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.tokens[w])
	req.Header.Set("Idempotency-Key", `"`+key+`"`)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("POST /api/orders: %s: %.200s", resp.Status, b)
	}
	if got := resp.Header.Get("Idempotent-Replayed") == "true"; got != replay {
		return fmt.Errorf("POST /api/orders: Idempotent-Replayed %v, want %v", got, replay)
	}
	return nil
}

// CheckoutPage loads worker w's shopper's checkout page: 200 with its pay form.
func (s *Shop) CheckoutPage(ctx context.Context, w int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/checkout", nil)
	if err != nil {
		return err
	}
	resp, err := s.shoppers[w].Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte("idempotency_key")) {
		return fmt.Errorf("GET /checkout: %s", resp.Status)
	}
	return nil
}

// BrowserOrder is one purchase through the pages, as worker w's buyer: the
// product into the cart (the catalog's form), the checkout page rendered
// with its idempotency key, its pay form submitted with the test card, and
// the redirect followed to the receipt.
func (s *Shop) BrowserOrder(ctx context.Context, w int) error {
	b := s.buyers[w]
	if err := s.addToCart(ctx, b.client, b.add); err != nil {
		return err
	}
	page, err := s.page(ctx, b.client, "/checkout")
	if err != nil {
		return err
	}
	form := page.Find(`form[data-testid=checkout-form]`).First()
	if form.Length() == 0 {
		return errors.New("GET /checkout: no checkout form")
	}
	values := formValues(form)
	values.Set("card", "4242 4242 4242 4242")
	code, status, loc, err := s.postForm(ctx, b.client, "/checkout", values)
	if err != nil {
		return err
	}
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, "/orders/") {
		return fmt.Errorf("POST /checkout: %s to %q, want 303 to a receipt", status, loc)
	}
	receipt, err := s.page(ctx, b.client, loc)
	if err != nil {
		return err
	}
	if receipt.Find(`[data-testid=receipt]`).Length() == 0 {
		return fmt.Errorf("GET %s: no receipt", loc)
	}
	return nil
}

// page GETs path with c and parses it; 200 expected.
func (s *Shop) page(ctx context.Context, c *http.Client, path string) (*goquery.Document, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return goquery.NewDocumentFromReader(resp.Body)
}

// formValues are the values a browser would send for form's named inputs
// and buttons (the first of each name; the pay form names sku and quantity
// once per line, and the catalog's forms hold one line).
func formValues(form *goquery.Selection) url.Values {
	values := url.Values{}
	form.Find("input[name], button[name]").Each(func(_ int, in *goquery.Selection) {
		name, _ := in.Attr("name")
		value, _ := in.Attr("value")
		values.Add(name, value)
	})
	return values
}

// postForm posts values to path with c, as a browser submits a form, and
// returns the answer's status code, status line and Location: the forms
// answer with a redirect, whose body is read and dropped.
func (s *Shop) postForm(ctx context.Context, c *http.Client, path string, values url.Values) (code int, status, location string, err error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, strings.NewReader(values.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // the redirect is the answer
	resp.Body.Close()
	return resp.StatusCode, resp.Status, resp.Header.Get("Location"), nil
}

// addToCart posts the catalog's add-to-cart form with c: 303 expected.
func (s *Shop) addToCart(ctx context.Context, c *http.Client, values url.Values) error {
	code, status, _, err := s.postForm(ctx, c, "/cart", values)
	if err != nil {
		return err
	}
	if code != http.StatusSeeOther {
		return fmt.Errorf("add to cart: %s", status)
	}
	return nil
}

// newShopper is a browser without JavaScript that put the product in its
// cart through the catalog's add-to-cart form; it returns the form's values
// too, to add again.
func (s *Shop) newShopper(ctx context.Context) (*http.Client, url.Values, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: s.client.Transport, Timeout: s.client.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	doc, err := s.page(ctx, c, "/")
	if err != nil {
		return nil, nil, err
	}
	form := doc.Find(`form[data-testid=add-to-cart]`).First()
	if form.Length() == 0 {
		return nil, nil, errors.New("loadtest: the catalog page has no add-to-cart form")
	}
	values := formValues(form)
	if err := s.addToCart(ctx, c, values); err != nil {
		return nil, nil, err
	}
	return c, values, nil
}

func (s *Shop) getJSON(ctx context.Context, path string, v any) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
