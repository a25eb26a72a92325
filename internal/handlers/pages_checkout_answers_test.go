package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
)

// wantCardKept fails unless the answer shows the pay form's card field
// filled with typed, in a response no cache keeps.
func wantCardKept(t testing.TB, p page, typed string) {
	t.Helper()
	if got, _ := p.testid("card").Attr("value"); got != typed {
		t.Errorf("got card field %q, want the number as typed, %q", got, typed)
	}
	if got := p.header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("got Cache-Control %q, want no-store: the page holds a card number", got)
	}
}

// wantCardAtFault fails unless the card field is marked invalid and named
// by its error, which has the id the field points at, and is focused.
func wantCardAtFault(t testing.TB, p page) {
	t.Helper()
	card := p.testid("card")
	if got, _ := card.Attr("aria-invalid"); got != "true" {
		t.Errorf("got aria-invalid %q on the card, want true", got)
	}
	described, _ := card.Attr("aria-describedby")
	for _, id := range []string{"card-check", "card-error"} {
		if !strings.Contains(" "+described+" ", " "+id+" ") {
			t.Errorf("got aria-describedby %q, want it to name %s", described, id)
		}
	}
	if p.doc.Find("#card-error").Length() != 1 {
		t.Error("no element with the id card-error")
	}
	if _, ok := card.Attr("autofocus"); !ok {
		t.Error("the card field at fault is not focused on load (autofocus)")
	}
}

// The answers that show the pay form again keep the card as typed, so that
// it is not typed twice, and tie the error to the field.
func TestFormAnswersKeepTheTypedCard(t *testing.T) {
	t.Parallel()
	t.Run("a typo", func(t *testing.T) {
		t.Parallel()
		h := apptest.New(t, withSecret)
		s := newShopper(t, h)
		s.addToCart(t, "mug-espresso")
		p := s.post(t, "/checkout", s.checkoutForm(t, "4242 4242 4242 4241"))
		if p.status != http.StatusBadRequest {
			t.Fatalf("got %d, want 400", p.status)
		}
		wantCardKept(t, p, "4242 4242 4242 4241")
		wantCardAtFault(t, p)
	})
	t.Run("the cart changed", func(t *testing.T) {
		t.Parallel()
		h := apptest.New(t, withSecret)
		s := newShopper(t, h)
		s.addToCart(t, "mug-espresso")
		stale := s.checkoutForm(t, goodCard)
		s.addToCart(t, "book-retries")
		p := s.post(t, "/checkout", stale)
		if p.status != http.StatusConflict {
			t.Fatalf("got %d, want 409", p.status)
		}
		wantCardKept(t, p, goodCard)
		if _, ok := p.testid("cart-changed").Attr("autofocus"); !ok {
			t.Error("the cart-changed notice is not focused on load")
		}
		if _, ok := p.testid("card").Attr("aria-invalid"); ok {
			t.Error("the card is marked invalid, but nothing is wrong with it")
		}
	})
	t.Run("an outage", func(t *testing.T) {
		t.Parallel()
		h := apptest.New(t, withSecret)
		s := newShopper(t, h)
		s.addToCart(t, "mug-espresso")
		form := s.checkoutForm(t, goodCard)
		h.SetProvider(t, 0, "before_charge")
		p := s.post(t, "/checkout", form)
		if p.status != http.StatusBadGateway {
			t.Fatalf("got %d, want 502", p.status)
		}
		wantCardKept(t, p, goodCard)
		alert := p.testid("outage-alert")
		if role, _ := alert.Attr("role"); role != "alert" {
			t.Errorf("got outage summary role %q, want alert", role)
		}
		if _, ok := alert.Attr("autofocus"); !ok {
			t.Error("the outage summary is not focused on load")
		}
		// It follows the order: a link to its status, a refresh there
		// for browsers without script, a countdown for the script.
		status := "/checkout/status?key=" + form.Get("idempotency_key")
		if href, _ := p.testid("check-status").Attr("href"); href != status {
			t.Errorf("got status link %q, want %q", href, status)
		}
		if got := p.doc.Find("head noscript").Text(); !strings.Contains(got, "url="+status) {
			t.Errorf("got <noscript> %q in the head, want a refresh to %s", got, status)
		}
		wait := p.testid("retry-after")
		if got, _ := wait.Attr("data-countdown"); got != p.header.Get("Retry-After") {
			t.Errorf("got countdown from %q, want the Retry-After, %q", got, p.header.Get("Retry-After"))
		}
		if !strings.Contains(wait.Text(), "a few seconds") {
			t.Errorf("got %q, want a few seconds (the script counts them)", wait.Text())
		}
	})
	t.Run("a fresh checkout", func(t *testing.T) {
		t.Parallel()
		h := apptest.New(t, withSecret)
		s := newShopper(t, h)
		s.addToCart(t, "mug-espresso")
		p := s.get(t, "/checkout")
		card := p.testid("card")
		if _, ok := card.Attr("value"); ok {
			t.Error("the card field of a fresh checkout has a value")
		}
		digits := func(s string) (n int) {
			for _, r := range s {
				if r >= '0' && r <= '9' {
					n++
				}
			}
			return n
		}
		if ph, _ := card.Attr("placeholder"); ph == "" || digits(ph) >= 12 {
			t.Errorf("got placeholder %q, want what to type, not a number that looks typed", ph)
		}
		if _, ok := card.Attr("aria-invalid"); ok {
			t.Error("a fresh card field is marked invalid")
		}
	})
}

// A declined card is said under the card field of the checkout form, with
// the order summary kept and a new key (the declined one is final); the
// declined form sent again replays the decline, and the new form pays.
func TestDeclineShowsTheFormAgain(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "tee-idempotent")
	form := s.checkoutForm(t, declinedCard)

	p := s.post(t, "/checkout", form)
	if p.status != http.StatusPaymentRequired || p.testid("checkout-form").Length() != 1 {
		t.Fatalf("got %d, want 402 with the checkout form", p.status)
	}
	declined := p.testid("declined")
	if role, _ := declined.Attr("role"); role != "alert" {
		t.Errorf("got decline role %q, want alert", role)
	}
	if id, _ := declined.Attr("id"); id != "card-error" {
		t.Errorf("got decline id %q, want card-error, the card field's error", id)
	}
	if p.text("decline-message") == "" {
		t.Error("the decline says nothing of why")
	}
	wantCardAtFault(t, p)
	if p.testid("summary-line").Length() != 1 {
		t.Errorf("got %d summary lines, want the order summary kept", p.testid("summary-line").Length())
	}
	if got, _ := p.testid("card").Attr("value"); got != "" {
		t.Errorf("got card %q, want the refused card not filled in again", got)
	}
	newKey, _ := p.testid("idempotency-key").Attr("value")
	if newKey == "" || newKey == form.Get("idempotency_key") {
		t.Fatalf("got key %q after the decline, want a new one", newKey)
	}

	again := s.post(t, "/checkout", form)
	if again.status != http.StatusPaymentRequired || again.testid("already-declined").Length() != 1 {
		t.Errorf("resubmit: got %d, want the decline replayed with its note", again.status)
	}
	if key, _ := again.testid("idempotency-key").Attr("value"); key != newKey {
		t.Errorf("resubmit: got key %q, want the new form's %q", key, newKey)
	}

	retry := formValues(p.testid("checkout-form"))
	retry.Set("card", goodCard)
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", retry)))
	h.WantStats(t, 1, 1)
}

// The checkout form names its key's status page, which the page asks when
// it is shown again from the browser's cache (static/app.js), and which
// answers a paid key with the way to its receipt; the "already paid" note
// it then shows is in the page, hidden.
func TestCheckoutPageCanTellItWasPaid(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	p := s.get(t, "/checkout")
	form := p.testid("checkout-form")
	key, _ := p.testid("idempotency-key").Attr("value")
	status, _ := form.Attr("data-status-url")
	if status != "/checkout/status?key="+key {
		t.Fatalf("got data-status-url %q, want the status of the form's key %q", status, key)
	}
	if note := p.testid("already-paid"); note.Length() != 1 || note.AttrOr("role", "") != "alert" {
		t.Errorf("got %d already-paid notes (role %q), want one alert", note.Length(), note.AttrOr("role", ""))
	} else if _, hidden := note.Attr("hidden"); !hidden {
		t.Error("the already-paid note shows on a checkout not paid")
	}
	values := formValues(form)
	values.Set("card", goodCard)
	receipt := s.post(t, "/checkout", values).header.Get("Location")
	if got := s.get(t, status); got.status != http.StatusSeeOther || got.header.Get("Location") != receipt {
		t.Errorf("status of the paid key: got %d to %q, want 303 to the receipt %q", got.status, got.header.Get("Location"), receipt)
	}
}

// The pages that answer a POST, the error pages and the 404 show the
// cart's count on the Cart link, as every other page does.
func TestAnswersShowTheCartCount(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	wantCount := func(what string, p page) {
		t.Helper()
		if got := p.text("cart-count"); got != "1" {
			t.Errorf("%s (%d): got cart count %q, want 1", what, p.status, got)
		}
	}
	wantCount("a typo", s.post(t, "/checkout", s.checkoutForm(t, "4242 4242 4242 4241")))
	altered := s.checkoutForm(t, goodCard)
	altered.Set("amount", "1")
	wantCount("an altered form", s.post(t, "/checkout", altered))
	wantCount("a missing page", s.get(t, "/no-such-page"))
	h.SetProvider(t, 0, "before_charge")
	wantCount("an outage", s.post(t, "/checkout", s.checkoutForm(t, goodCard)))
}

// Without JavaScript, the receipt's pending points do not say they update
// by themselves (the script does that, and says so): a reload shows them.
func TestReceiptPointsSayReloadWithoutScript(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	receipt := s.follow(t, s.post(t, "/checkout", s.checkoutForm(t, goodCard)))
	if got := receipt.text("order-points"); strings.Contains(got, "by itself") || !strings.Contains(got, "reload") {
		t.Errorf("got pending points %q, want them to say to reload", got)
	}
}

// The checkout of a cart just ordered, asked again (Back from the receipt
// to a page the browser does not keep), says it is paid and links the
// receipt, rather than a Pay button or an empty cart; once the shopper has
// a cart again, it is that cart's checkout or the cart.
func TestCheckoutOfAnOrderedCartSaysAlreadyPaid(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	receipt := s.post(t, "/checkout", s.checkoutForm(t, goodCard)).header.Get("Location")
	p := s.get(t, "/checkout")
	if p.status != http.StatusOK || p.testid("already-paid").AttrOr("role", "") != "alert" {
		t.Fatalf("checkout after paying: got %d, want 200 with the already-paid alert", p.status)
	}
	if href, _ := p.testid("already-paid-receipt").Attr("href"); href != receipt {
		t.Errorf("got receipt link %q, want %q", href, receipt)
	}
	if p.testid("pay").Length() != 0 {
		t.Error("the paid checkout has a Pay button")
	}
	s.addToCart(t, "book-retries")
	if p := s.get(t, "/checkout"); p.testid("pay").Length() != 1 {
		t.Errorf("checkout of a new cart: got %d without a Pay button", p.status)
	}
}
