package handlers_test

// The browser shop through plain HTTP, as a browser without JavaScript uses
// it: pages parsed with goquery and found by data-testid, and every duplicate
// of a pay form checked against the charges and orders in the database.

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/formkey"
	"exactlyonce/internal/problem"
	"exactlyonce/static"
)

func withSecret(cfg *apptest.Setup) { cfg.SessionSecret = testSecret }

func TestCatalogPage(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	s := newShopper(t, h)
	p := s.get(t, "/")
	if p.status != http.StatusOK {
		t.Fatalf("got %d, want 200", p.status)
	}
	products := p.testid("product")
	if products.Length() < 3 {
		t.Fatalf("got %d products, want the catalog", products.Length())
	}
	mug := p.doc.Find(`[data-testid=product][data-sku="mug-espresso"]`)
	if got := strings.TrimSpace(mug.Find(`[data-testid=product-price]`).Text()); got != "€12.00" {
		t.Errorf("got mug price %q, want €12.00", got)
	}
	form := mug.Find(`form[data-testid=add-to-cart]`)
	v := formValues(form)
	if v.Get("csrf_token") == "" || v.Get("sku") != "mug-espresso" || v.Get("quantity") != "1" {
		t.Errorf("got add-to-cart form %v, want sku, quantity 1 and a CSRF token", v)
	}
	for _, c := range p.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "shop_session=") {
			t.Errorf("a visit that changes nothing started a session: %s", c)
		}
	}
	if s := h.Stats(t); s.Orders != 0 {
		t.Errorf("got %+v", s)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	s := newShopper(t, h)
	for _, path := range []string{"/", "/cart", "/no-such-page"} {
		p := s.get(t, path)
		want := map[string]string{
			"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
			"X-Content-Type-Options":  "nosniff",
			"X-Frame-Options":         "DENY",
			"Referrer-Policy":         "same-origin",
			"Cache-Control":           "no-store",
			"Content-Type":            "text/html; charset=UTF-8",
		}
		for name, value := range want {
			if got := p.header.Get(name); got != value {
				t.Errorf("%s: got %s %q, want %q", path, name, got, value)
			}
		}
	}
	// No inline script or style for the CSP to refuse.
	p := s.get(t, "/")
	if n := p.doc.Find("script:not([src]), style, [style]").Length(); n != 0 {
		t.Errorf("got %d inline scripts or styles, want none", n)
	}
}

func TestStaticAssets(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	for _, name := range []string{"app.css", "app.js"} {
		r := h.Do(t, http.MethodGet, static.URL(name), "")
		if r.Status != http.StatusOK || len(r.Body) == 0 {
			t.Errorf("%s: got %d, want 200 with the file", name, r.Status)
		}
		if got := r.Header.Get("Cache-Control"); !strings.Contains(got, "immutable") {
			t.Errorf("%s: got Cache-Control %q, want immutable for the hashed URL", name, got)
		}
	}
	if r := h.Do(t, http.MethodGet, "/static/app.css", ""); r.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("unhashed URL: got Cache-Control %q, want no-cache", r.Header.Get("Cache-Control"))
	}
	if r := h.Do(t, http.MethodGet, "/static/nope.js", ""); r.Status != http.StatusNotFound {
		t.Errorf("missing asset: got %d, want 404", r.Status)
	}
}

// The lab's stylesheet and script are the demo's (demo/lab/labviews): the
// shop's binary neither embeds nor serves them.
func TestShopServesNoDemoAssets(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	for _, path := range []string{"/static/lab.js", "/static/lab.css", "/lab/static/lab.js"} {
		if r := h.Do(t, http.MethodGet, path, ""); r.Status != http.StatusNotFound {
			t.Errorf("%s: got %d, want 404", path, r.Status)
		}
	}
}

func TestCartSetsQuantities(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)

	// The catalog's add form sets the quantity the shopper saw plus one:
	// sent twice, as a double-click does, it adds one, not two.
	catalog := s.get(t, "/")
	add := formValues(catalog.doc.Find(`[data-testid=product][data-sku="mug-espresso"] form`))
	for range 2 {
		if r := s.post(t, "/cart", add); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/?") {
			t.Fatalf("add: got %d to %q, want 303 back to the catalog", r.status, r.header.Get("Location"))
		}
	}
	id := s.id(t)
	if got := cartQuantities(t, h, id); got["mug-espresso"] != 1 {
		t.Errorf("after a double add: got %v, want one mug", got)
	}
	if got := s.get(t, "/").doc.Find(`[data-sku="mug-espresso"] [data-testid=product-in-cart]`).Text(); !strings.Contains(got, "1 in your cart") {
		t.Errorf("catalog: got %q, want the quantity in the cart", got)
	}

	cart := s.get(t, "/cart")
	line := cart.doc.Find(`[data-testid=cart-line][data-sku="mug-espresso"]`)
	set := formValues(line.Find(`form[data-testid=set-quantity]`))
	set.Set("quantity", "3")
	s.post(t, "/cart", set)
	s.post(t, "/cart", set)
	cart = s.get(t, "/cart")
	if got := cart.text("cart-total"); got != "€36.00" {
		t.Errorf("three mugs: got total %q, want €36.00", got)
	}
	remove := formValues(cart.doc.Find(`[data-testid=cart-line][data-sku="mug-espresso"] form[data-testid=remove]`))
	s.post(t, "/cart", remove)
	s.post(t, "/cart", remove)
	if p := s.get(t, "/cart"); p.testid("cart-empty").Length() != 1 {
		t.Errorf("after remove: want the empty cart")
	}

	for _, bad := range []url.Values{
		{"csrf_token": set["csrf_token"], "sku": {"no-such-thing"}, "quantity": {"1"}},
		{"csrf_token": set["csrf_token"], "sku": {"mug-espresso"}, "quantity": {"100"}},
		{"csrf_token": set["csrf_token"], "sku": {"mug-espresso"}, "quantity": {"-1"}},
		{"sku": {"mug-espresso"}, "quantity": {"2"}},
	} {
		p := s.post(t, "/cart", bad)
		if p.status < 400 || p.status > 499 || p.testid("error-page").Length() != 1 {
			t.Errorf("%v: got %d, want a 4xx error page", bad, p.status)
		}
	}
	if got := cartQuantities(t, h, id); len(got) != 0 {
		t.Errorf("refused writes changed the cart: %v", got)
	}
}

func TestCheckoutPage(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	if r := s.get(t, "/checkout"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/cart" {
		t.Errorf("empty cart: got %d to %q, want 303 to /cart", r.status, r.header.Get("Location"))
	}
	s.addToCart(t, "mug-espresso")
	s.addToCart(t, "mug-espresso")
	s.addToCart(t, "sticker-pack")

	p := s.get(t, "/checkout")
	if p.status != http.StatusOK {
		t.Fatalf("got %d, want 200", p.status)
	}
	if got := p.text("total"); got != "€28.50" {
		t.Errorf("got total %q, want €28.50 (2 × €12.00 + €4.50)", got)
	}
	if got := p.testid("summary-line").Length(); got != 2 {
		t.Errorf("got %d summary lines, want 2", got)
	}
	key, _ := p.testid("idempotency-key").Attr("value")
	if id, err := uuid.Parse(key); err != nil || id.Version() != 7 {
		t.Errorf("got key %q, want a UUIDv7", key)
	}
	if name, _ := p.testid("idempotency-key").Attr("name"); name != "idempotency_key" {
		t.Errorf("got key input named %q, want idempotency_key", name)
	}
	form := p.testid("checkout-form")
	if method, _ := form.Attr("method"); method != "post" {
		t.Errorf("got form method %q, want post", method)
	}
	if v := formValues(form); v.Get("csrf_token") == "" || v.Get("amount") != "2850" {
		t.Errorf("got form %v, want a CSRF token and the amount shown", v)
	}
	if p.testid("pay").Length() != 1 || p.testid("card").Length() != 1 {
		t.Error("no pay button or card field")
	}
	cards := p.text("test-cards")
	if !strings.Contains(cards, "4242 4242 4242 4242") || !strings.Contains(cards, "4000 0000 0000 0002") ||
		!strings.Contains(cards, "4000 0027 6000 3184") {
		t.Errorf("got test cards %q, want the succeeding, the declined and the 3-D Secure card", cards)
	}
	if got := p.header.Get("Cache-Control"); got != "private, no-cache" {
		t.Errorf("got Cache-Control %q, want private, no-cache so Back shows the same form", got)
	}
	again, _ := s.get(t, "/checkout").testid("idempotency-key").Attr("value")
	if again != key {
		t.Errorf("a second rendering of the same cart got key %q, want the cart version's key %q", again, key)
	}
	h.WantNothingStored(t)
}

func TestCheckoutPlacesOneOrder(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	s.addToCart(t, "book-retries")

	first := s.post(t, "/checkout", s.checkoutForm(t, goodCard))
	if first.status != http.StatusSeeOther || !strings.HasPrefix(first.header.Get("Location"), "/orders/") {
		t.Fatalf("got %d to %q, want 303 to the receipt", first.status, first.header.Get("Location"))
	}
	receipt := s.follow(t, first)
	id := wantReceipt(t, receipt)
	if got := receipt.text("amount"); !strings.Contains(got, "€46.50") {
		t.Errorf("got amount %q, want €46.50", got)
	}
	if receipt.testid("already-placed").Length() != 0 {
		t.Error("a first order carries the already-placed note")
	}
	if got := cartQuantities(t, h, s.id(t)); len(got) != 0 {
		t.Errorf("cart after the order: got %v, want empty", got)
	}
	orders := s.get(t, "/orders")
	if rows := orders.testid("order-row"); rows.Length() != 1 || rows.AttrOr("data-order-id", "") != id {
		t.Errorf("orders page: got %d rows, want the one order %s", rows.Length(), id)
	}
	h.WantStats(t, 1, 1)
}

func TestResubmitAfterSuccessReplays(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "hoodie-409")
	form := s.checkoutForm(t, goodCard)
	first := s.post(t, "/checkout", form)
	id := wantReceipt(t, s.follow(t, first))

	// A refresh of the POST, or Back and Pay again: the same form again.
	for range 2 {
		again := s.post(t, "/checkout", form)
		if want := "/orders/" + id + "?replayed=1"; again.status != http.StatusSeeOther || again.header.Get("Location") != want {
			t.Fatalf("resubmit: got %d to %q, want 303 to %q", again.status, again.header.Get("Location"), want)
		}
		if cookies := again.header.Values("Set-Cookie"); len(cookies) != 0 {
			t.Errorf("a replay set cookies: %v", cookies)
		}
		receipt := s.follow(t, again)
		if got := wantReceipt(t, receipt); got != id {
			t.Errorf("got order %s, want the same order %s", got, id)
		}
		if receipt.testid("already-placed").Length() != 1 {
			t.Error("replayed receipt without the already-placed note")
		}
	}
	h.WantStats(t, 1, 1)
}

func TestTamperedFormIsRefused(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	form := s.checkoutForm(t, goodCard)
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", form)))

	// The signature covers the lines and the amount: any edit fails it.
	more := cloneValues(form)
	more.Set("quantity", "5")
	wantErrorPage(t, s.post(t, "/checkout", more), http.StatusForbidden)

	cheaper := cloneValues(form)
	cheaper.Set("amount", "1")
	wantErrorPage(t, s.post(t, "/checkout", cheaper), http.StatusForbidden)
	h.WantStats(t, 1, 1)

	// A new form whose quantity and amount were edited consistently (two
	// mugs for the price of two, under the form's fresh key) is refused
	// before anything is claimed: the signature binds the snapshot shown.
	s.addToCart(t, "mug-espresso")
	fresh := s.checkoutForm(t, goodCard)
	fresh.Set("quantity", "2")
	fresh.Set("amount", "2400")
	wantErrorPage(t, s.post(t, "/checkout", fresh), http.StatusForbidden)
	if st := h.Stats(t); st.KeysStarted+st.KeysFinished != 1 {
		t.Errorf("got %+v, want only the first order's key", st)
	}
	h.WantStats(t, 1, 1)
}

func TestDeclinedCard(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "tee-idempotent")
	form := s.checkoutForm(t, declinedCard)

	first := s.post(t, "/checkout", form)
	if first.status != http.StatusPaymentRequired || first.testid("declined").Length() != 1 {
		t.Fatalf("got %d, want the 402 with the decline", first.status)
	}
	if key, _ := first.testid("idempotency-key").Attr("value"); key == "" || key == form.Get("idempotency_key") {
		t.Errorf("got key %q in the form under the decline, want a new one (the declined key is final)", key)
	}
	again := s.post(t, "/checkout", form)
	if again.status != http.StatusPaymentRequired || again.testid("already-declined").Length() != 1 {
		t.Errorf("resubmit: got %d, want the declined page replayed with its note", again.status)
	}
	if got := cartQuantities(t, h, s.id(t)); got["tee-idempotent"] != 1 {
		t.Errorf("cart after a decline: got %v, want it kept", got)
	}

	// A new attempt renders a new form with a new key, and succeeds.
	retry := s.checkoutForm(t, goodCard)
	if retry.Get("idempotency_key") == form.Get("idempotency_key") {
		t.Fatal("the new attempt reuses the declined key")
	}
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", retry)))
	h.WantStats(t, 1, 1)
}

func TestCardTypoKeepsTheForm(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "sticker-pack")
	form := s.checkoutForm(t, "4242")
	p := s.post(t, "/checkout", form)
	if p.status != http.StatusBadRequest || p.text("card-error") == "" {
		t.Fatalf("got %d, want the form again with the card's error", p.status)
	}
	if key, _ := p.testid("idempotency-key").Attr("value"); key != form.Get("idempotency_key") {
		t.Errorf("got key %q, want the same key %q: nothing was stored", key, form.Get("idempotency_key"))
	}
	h.WantNothingStored(t)
	again := formValues(p.testid("checkout-form"))
	again.Set("card", goodCard)
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", again)))
	h.WantStats(t, 1, 1)
}

func TestRefusedFormsStoreNothing(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	alice, bob := newShopper(t, h), newShopper(t, h)
	alice.addToCart(t, "mug-espresso")
	bob.addToCart(t, "mug-espresso")
	form := alice.checkoutForm(t, goodCard)
	bobForm := bob.checkoutForm(t, goodCard)

	key, err := formkey.New([]byte(testSecret), time.Hour).MintAt(time.Now().Add(-2 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	expired := resign(t, alice.id(t), form, key)

	// Alice's key in Bob's form: signed for Alice, refused for Bob.
	foreign := cloneValues(bobForm)
	foreign.Set("idempotency_key", form.Get("idempotency_key"))
	foreign.Set("key_sig", form.Get("key_sig"))

	cases := []struct {
		name   string
		who    *shopper
		form   url.Values
		status int
	}{
		{"missing key", alice, without(form, "idempotency_key"), http.StatusBadRequest},
		{"made-up key", alice, with(form, "idempotency_key", uuid.Must(uuid.NewV7()).String()), http.StatusForbidden},
		{"unsigned key", alice, without(form, "key_sig"), http.StatusForbidden},
		{"foreign key", bob, foreign, http.StatusForbidden},
		{"expired key", alice, expired, http.StatusBadRequest},
		{"missing CSRF token", alice, without(form, "csrf_token"), http.StatusBadRequest},
		{"wrong CSRF token", alice, with(form, "csrf_token", "forged"), http.StatusForbidden},
		{"another browser's CSRF token", alice, with(form, "csrf_token", bobForm.Get("csrf_token")), http.StatusForbidden},
		{"no cart lines", alice, without(without(form, "sku"), "quantity"), http.StatusBadRequest},
		{"no cart id", alice, without(form, "cart_id"), http.StatusBadRequest},
		// The signature covers the cart version, the lines and the amount:
		// an edited form is refused before the catalog or the engine sees it.
		{"zero quantity", alice, with(form, "quantity", "0"), http.StatusForbidden},
		{"unknown product", alice, with(form, "sku", "no-such-thing"), http.StatusForbidden},
		{"another cart version", alice, with(form, "cart_version", "7"), http.StatusForbidden},
		{"another cart", alice, with(form, "cart_id", bobForm.Get("cart_id")), http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantErrorPage(t, tc.who.post(t, "/checkout", tc.form), tc.status)
		})
	}
	// A browser with no cookies at all: the CSRF check refuses it first.
	stranger := newShopper(t, h)
	wantErrorPage(t, stranger.post(t, "/checkout", form), http.StatusForbidden)
	h.WantNothingStored(t)
}

func TestReceiptIsTheOwnersOnly(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	alice, bob := newShopper(t, h), newShopper(t, h)
	alice.addToCart(t, "mug-espresso")
	first := alice.post(t, "/checkout", alice.checkoutForm(t, goodCard))
	wantReceipt(t, alice.follow(t, first))

	wantErrorPage(t, bob.get(t, first.header.Get("Location")), http.StatusNotFound)
	wantErrorPage(t, newShopper(t, h).get(t, first.header.Get("Location")), http.StatusNotFound)
	wantErrorPage(t, alice.get(t, "/orders/not-a-uuid"), http.StatusNotFound)
	if rows := bob.get(t, "/orders").testid("order-row").Length(); rows != 0 {
		t.Errorf("bob sees %d orders, want none", rows)
	}
}

func TestErrorsArePagesForPeopleAndProblemsForTheAPI(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	s := newShopper(t, h)
	wantErrorPage(t, s.get(t, "/no-such-page"), http.StatusNotFound)
	r := h.Do(t, http.MethodGet, "/api/no-such-thing", "")
	if r.Status != http.StatusNotFound || r.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("API: got %d %q, want a 404 problem+json", r.Status, r.Header.Get("Content-Type"))
	}
}

// TestMethodNotAllowedFollowsTheRouteGroup checks the 405 the router
// answers before any route middleware runs: a page's path answers it as a
// page, with the Allow header, not as the problem+json Echo's error handler
// gives what no route group took.
func TestMethodNotAllowedFollowsTheRouteGroup(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	s := newShopper(t, h)
	req, err := http.NewRequest(http.MethodPut, h.URL+"/checkout", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	p := s.do(t, req)
	wantErrorPage(t, p, http.StatusMethodNotAllowed)
	if got := p.header.Get("Content-Type"); !strings.HasPrefix(got, "text/html") {
		t.Errorf("page: got Content-Type %q, want text/html", got)
	}
	if got, want := p.header.Get("Allow"), "GET, POST, OPTIONS"; got != want {
		t.Errorf("page: got Allow %q, want %q", got, want)
	}

	// The API's paths answer as the API does, although its catch-all
	// would otherwise take the request for an unknown path (404).
	r := h.Do(t, http.MethodPut, "/api/orders", oneMug)
	apptest.WantProblem(t, r, problem.MethodNotAllowed)
	if got, want := r.Header.Get("Allow"), "POST, GET, OPTIONS"; got != want {
		t.Errorf("api: got Allow %q, want %q", got, want)
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func with(v url.Values, name, value string) url.Values {
	out := cloneValues(v)
	out.Set(name, value)
	return out
}

func without(v url.Values, name string) url.Values {
	out := cloneValues(v)
	out.Del(name)
	return out
}

// Signing out ends the session in this browser and in any other holding a
// copy of its cookie: neither sees the shopper's orders afterwards.
func TestSignOutRevokesTheSession(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", s.checkoutForm(t, goodCard))))
	// Another browser with a copy of the cookies (a shared computer's
	// profile copied, a stolen cookie).
	copied := newShopper(t, h)
	u, _ := url.Parse(h.URL)
	copied.Client.Jar.SetCookies(u, s.Client.Jar.Cookies(u))
	if n := copied.get(t, "/orders").doc.Find(`[data-testid=order-row]`).Length(); n != 1 {
		t.Fatalf("the copy before sign-out: got %d orders, want 1", n)
	}
	orders := s.get(t, "/orders")
	form := formValues(orders.testid("signout-form"))
	if p := s.post(t, "/signout", form); p.status != http.StatusSeeOther {
		t.Fatalf("sign out: got %d, want 303", p.status)
	}
	for name, b := range map[string]*shopper{"this browser": s, "the copy": copied} {
		p := b.get(t, "/orders")
		if n := p.doc.Find(`[data-testid=order-row]`).Length(); n != 0 || p.testid("signout-form").Length() != 0 {
			t.Errorf("%s after sign-out: got %d orders and a sign-out form %d, want neither", name, n, p.testid("signout-form").Length())
		}
	}
	h.WantStats(t, 1, 1) // the order itself stays
}

// The token is shown once, so no cache may keep the answer that carries it.
func TestNewCustomerTokenIsNotCached(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	r := h.Do(t, http.MethodPost, "/api/customers", `{"name":"Ada"}`)
	if r.Status != http.StatusCreated || r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("got %d with Cache-Control %q, want 201 with no-store", r.Status, r.Header.Get("Cache-Control"))
	}
}

// The checkout links back to the cart, so a shopper who wants to change
// the order does not have to go through the header.
func TestCheckoutLinksBackToTheCart(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	p := s.get(t, "/checkout")
	if href, _ := p.testid("edit-cart").Attr("href"); href != "/cart" {
		t.Errorf("got an Edit cart link to %q, want /cart", href)
	}
}
