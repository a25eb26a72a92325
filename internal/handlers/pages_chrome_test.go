package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/catalog"
)

// The catalog's add form comes back to the catalog, at the product, whose
// card says what it did; the cart's forms end on the cart with a note; and
// every shop page's Cart link shows how many things the cart holds.
func TestCartSaysWhatChangedAndCounts(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	if n := s.get(t, "/").testid("cart-count").Length(); n != 0 {
		t.Errorf("a new shopper's Cart link: got %d counts, want none", n)
	}
	catalog := s.get(t, "/")
	if n := catalog.testid("added-note").Length(); n != 0 {
		t.Errorf("the catalog before any add: got %d notes, want none", n)
	}
	add := formValues(catalog.doc.Find(`[data-testid=product][data-sku="mug-espresso"] form`))
	added := s.post(t, "/cart", add)
	if got, want := added.header.Get("Location"), "/?done=added&sku=mug-espresso#product-mug-espresso"; added.status != http.StatusSeeOther || got != want {
		t.Errorf("add: got %d to %q, want 303 to %q (back to the product)", added.status, got, want)
	}
	catalog = s.follow(t, added)
	notes := catalog.testid("added-note")
	if notes.Length() != 1 || notes.Closest(`[data-testid=product]`).AttrOr("id", "") != "product-mug-espresso" {
		t.Fatalf("after add: got %d notes, want one, in the mug's card (id product-mug-espresso)", notes.Length())
	}
	if got, want := notes.Find("span").Text(), "Added Espresso mug to your cart."; got != want {
		t.Errorf("after add: got note %q, want %q", got, want)
	}
	if got := notes.Find("a").AttrOr("href", ""); got != "/cart" {
		t.Errorf("the note links %q, want the cart", got)
	}
	if got := catalog.text("cart-count"); got != "1" {
		t.Errorf("after add: got cart count %q, want 1", got)
	}
	if v := formValues(catalog.doc.Find(`[data-testid=product][data-sku="mug-espresso"] form`)); v.Get("quantity") != "2" || v.Get("csrf_token") == "" {
		t.Errorf("the mug's next add form: got %v, want quantity 2 and a CSRF token", v)
	}
	s.addToCart(t, "sticker-pack")
	s.addToCart(t, "sticker-pack") // one more: two sticker packs
	for _, path := range []string{"/", "/cart", "/checkout", "/orders", "/pickup"} {
		p := s.get(t, path)
		if got := p.text("cart-count"); got != "3" {
			t.Errorf("%s: got cart count %q, want 3", path, got)
		}
		if label := p.testid("nav-cart").AttrOr("aria-label", ""); label != "Cart, 3 items" {
			t.Errorf("%s: got Cart link label %q, want it to say the count", path, label)
		}
	}
	if p := s.get(t, "/"); p.testid("added-note").Length() != 0 {
		t.Error("the catalog visited again repeats the last note")
	}

	cart := s.get(t, "/cart")
	remove := formValues(cart.doc.Find(`[data-testid=cart-line][data-sku="mug-espresso"] form[data-testid=remove]`))
	cart = s.follow(t, s.post(t, "/cart", remove))
	if got, want := cart.text("cart-flash"), "Removed Espresso mug from your cart."; got != want {
		t.Errorf("after remove: got note %q, want %q", got, want)
	}
	if got := cart.text("cart-count"); got != "2" {
		t.Errorf("after remove: got cart count %q, want 2", got)
	}

	// The note is the shop's own words about a product it sells: a link
	// naming something else says nothing.
	for _, q := range []string{"?done=added&sku=%3Cscript%3E", "?done=%3Cb%3E&sku=mug-espresso"} {
		if p := s.get(t, "/cart"+q); p.status != http.StatusOK || p.testid("cart-flash").Length() != 0 {
			t.Errorf("/cart%s: got %d with note %q, want the cart with none", q, p.status, p.text("cart-flash"))
		}
	}
	for _, q := range []string{"?done=added&sku=%3Cscript%3E", "?done=%3Cb%3E&sku=mug-espresso", "?done=removed&sku=mug-espresso"} {
		if p := s.get(t, "/"+q); p.status != http.StatusOK || p.testid("added-note").Length() != 0 {
			t.Errorf("/%s: got %d with note %q, want the catalog with none", q, p.status, p.text("added-note"))
		}
	}

	// After the order the cart is empty, and the receipt's Cart link says so.
	receipt := s.follow(t, s.post(t, "/checkout", s.checkoutForm(t, goodCard)))
	wantReceipt(t, receipt)
	if n := receipt.testid("cart-count").Length(); n != 0 {
		t.Errorf("receipt: got %d cart counts, want none (the cart was ordered)", n)
	}
	if strings.Contains(receipt.doc.Text(), "ch_") {
		t.Error("the receipt shows the provider's charge id")
	}
}

// Every page links the shop's icon, which is served, so a browser's
// request for one is no 404; the footer links the pickup form, and not the
// lab, which the shop alone does not serve (the demo's tests, demo/lab,
// see the link when the lab is mounted).
func TestPagesLinkTheIconAndPickup(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	p := s.get(t, "/")
	icon, ok := p.doc.Find(`link[rel=icon]`).Attr("href")
	if !ok || !strings.HasPrefix(icon, "/static/favicon.svg?v=") {
		t.Fatalf("got icon link %q, want the hashed favicon", icon)
	}
	r := h.Do(t, http.MethodGet, icon, "")
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(r.Body), "<svg") {
		t.Errorf("icon: got %d %q, want 200 image/svg+xml", r.Status, r.Header.Get("Content-Type"))
	}
	if href := p.testid("nav-pickup").AttrOr("href", ""); href != "/pickup" {
		t.Errorf("got pickup link %q, want /pickup", href)
	}
	if n := p.testid("nav-lab").Length(); n != 0 {
		t.Errorf("got %d lab links, want none in the shop alone", n)
	}
}

// Every product of the catalog shows its one line of copy. Seeding fills a
// description left empty (a database from before descriptions) and keeps
// one an operator wrote.
func TestCatalogShowsDescriptions(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	ctx := context.Background()
	if _, err := h.DB.Pool.Exec(ctx, `UPDATE products SET description = CASE sku WHEN 'book-retries' THEN 'Written by us' ELSE '' END`); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Seed(ctx, h.DB.Queries); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, p := range catalog.Demo {
		want[p.SKU] = p.Description
	}
	want["book-retries"] = "Written by us"
	// The shop's catalog caches what it reads; nothing has read it yet.
	p := newShopper(t, h).get(t, "/")
	p.doc.Find(`[data-testid=product]`).Each(func(_ int, s *goquery.Selection) {
		sku := s.AttrOr("data-sku", "")
		if got := strings.TrimSpace(s.Find(`[data-testid=product-description]`).Text()); got != want[sku] || got == "" {
			t.Errorf("%s: got description %q, want %q", sku, got, want[sku])
		}
	})
}
