package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"exactlyonce/fakestripe"
	"exactlyonce/internal/apptest"
)

// authenticationCard is Stripe's test card that always asks for 3-D Secure.
const authenticationCard = "4000002760003184"

// bankPage is the fake bank's page the checkout's answer sends the shopper
// to (a page with a meta refresh and a link: a 303 to another origin is
// one the pay form's script could not follow), checked to be the fake's.
func bankPage(t *testing.T, h *apptest.Harness, p page) string {
	t.Helper()
	to, _ := p.testid("to-bank").Attr("href")
	refresh, _ := p.doc.Find(`meta[http-equiv=refresh]`).Attr("content")
	if p.status != http.StatusOK || !strings.HasPrefix(to, h.ProviderURL+"/3ds/authenticate/pi_") || refresh != "0;url="+to {
		t.Fatalf("got %d to %q (refresh %q), want the page that sends the shopper to the bank's 3-D Secure page", p.status, to, refresh)
	}
	return to
}

// decide answers the bank's page as the shopper's click would (outcome
// complete or fail) and returns where it sends them back.
func decide(t *testing.T, bank, outcome string) string {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(bank, url.Values{"outcome": {outcome}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the bank's page: got %d, want 303 back to the shop", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// back loads the shop's return URL the bank sent the shopper to.
func back(t *testing.T, s *shopper, returnURL string) page {
	t.Helper()
	u, err := url.Parse(returnURL)
	if err != nil || u.Path != "/checkout/return" || u.Query().Get("key") == "" || u.Query().Get("payment_intent") == "" {
		t.Fatalf("the bank sent the shopper to %q, want the shop's /checkout/return with the key and the intent", returnURL)
	}
	return s.get(t, u.RequestURI())
}

// A card whose bank asks for 3-D Secure, with no webhook to help: the
// checkout sends the shopper to the bank (a late second submit too, with
// the same key), nothing is charged meanwhile; the shopper completes the
// authentication with a double click, comes back, and lands on the one
// receipt; a refresh of the return and the form sent again land there too.
// One order, one charge.
func TestThreeDSecureRoundTrip(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret, apptest.WithoutWebhooks)
	s := newShopper(t, h)
	s.addToCart(t, "tee-idempotent")
	form := s.checkoutForm(t, authenticationCard)

	bank := bankPage(t, h, s.post(t, "/checkout", form))
	if again := bankPage(t, h, s.post(t, "/checkout", form)); again != bank {
		t.Fatalf("the same form again: sent to %q, want the same bank page %q", again, bank)
	}
	h.WantStats(t, 0, 0)

	returns := make([]string, 2)
	var wg sync.WaitGroup
	for i := range returns {
		wg.Go(func() { returns[i] = decide(t, bank, "complete") })
	}
	wg.Wait()
	if returns[0] != returns[1] {
		t.Fatalf("the double click: sent back to %q and %q, want one return URL", returns[0], returns[1])
	}
	settled := back(t, s, returns[0])
	if got := settled.header.Get("Idempotent-Replayed"); got != "" {
		t.Errorf("the return that settled the order: got Idempotent-Replayed %q, want none: its answer is new", got)
	}
	receipt := wantReceipt(t, s.follow(t, settled))
	refreshed := back(t, s, returns[0])
	if got := refreshed.header.Get("Idempotent-Replayed"); got != "true" {
		t.Errorf("a refresh of the return: got Idempotent-Replayed %q, want true", got)
	}
	if got := wantReceipt(t, s.follow(t, refreshed)); got != receipt {
		t.Errorf("a refresh of the return: got receipt %s, want %s", got, receipt)
	}
	if got := wantReceipt(t, s.follow(t, s.post(t, "/checkout", form))); got != receipt {
		t.Errorf("the form sent again: got receipt %s, want %s", got, receipt)
	}
	h.WantStats(t, 1, 1)
}

// A failed authentication charges nothing: back at the shop, the shopper
// is told the payment was declined, the cart is kept, and a new checkout
// (a new key) pays with another card.
func TestThreeDSecureFailed(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret, apptest.WithoutWebhooks)
	s := newShopper(t, h)
	s.addToCart(t, "tee-idempotent")
	form := s.checkoutForm(t, authenticationCard)
	bank := bankPage(t, h, s.post(t, "/checkout", form))

	declined := back(t, s, decide(t, bank, "fail"))
	if declined.status != http.StatusPaymentRequired || declined.testid("declined").Length() != 1 {
		t.Fatalf("back after a failed authentication: got %d, want the 402 declined page", declined.status)
	}
	if got := cartQuantities(t, h, s.id(t)); got["tee-idempotent"] != 1 {
		t.Errorf("cart after a failed authentication: got %v, want it kept", got)
	}
	h.WantStats(t, 0, 0)
	retry := s.checkoutForm(t, goodCard)
	if retry.Get("idempotency_key") == form.Get("idempotency_key") {
		t.Fatal("the new checkout reuses the failed key")
	}
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", retry)))
	h.WantStats(t, 1, 1)
}

// The shopper authenticates but never comes back (the bank's page loses
// the way back): the provider's webhook settles the order alone, and the
// status page the shopper opens later shows the receipt.
func TestThreeDSecureSettledByTheWebhook(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "tee-idempotent")
	form := s.checkoutForm(t, authenticationCard)
	bank := bankPage(t, h, s.post(t, "/checkout", form))

	if err := h.Provider.SetBehaviour(fakestripe.Behaviour{Authentication: fakestripe.AuthenticationFaults{LoseReturn: true}}); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(bank, url.Values{"outcome": {"complete"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("the bank's page with the return lost: got %d, want 502", resp.StatusCode)
	}
	key := form.Get("idempotency_key")
	deadline := time.Now().Add(10 * time.Second)
	for h.Key(t, apptest.Customer{ID: s.id(t)}, key).Status != "finished" {
		if time.Now().After(deadline) {
			t.Fatal("the webhook did not settle the order within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.WantStats(t, 1, 1)
	wantReceipt(t, s.follow(t, s.get(t, "/checkout/status?key="+url.QueryEscape(key))))
}

// A shopper who never finishes at their bank: once the authentication
// window has passed, the completer cancels the payment, which can then
// never charge, and the order is not completed.
func TestThreeDSecureAbandoned(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret, apptest.WithoutWebhooks, func(c *apptest.Setup) {
		c.AuthenticationWindow, c.CompleterGrace = time.Millisecond, time.Millisecond
	})
	s := newShopper(t, h)
	s.addToCart(t, "tee-idempotent")
	form := s.checkoutForm(t, authenticationCard)
	bank := bankPage(t, h, s.post(t, "/checkout", form))
	key := form.Get("idempotency_key")
	c := apptest.Customer{ID: s.id(t)}

	h.WaitLockExpired(t, c, key)
	time.Sleep(10 * time.Millisecond) // past the window and the grace
	if _, err := h.App.Completer.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if k := h.Key(t, c, key); k.Status != "finished" {
		t.Fatalf("after the window: got key %s, want finished (not completed)", k.Status)
	}
	if in, err := h.Intent(t, c, key); err != nil || in.Status != "canceled" {
		t.Fatalf("after the window: got intent %+v, %v, want it canceled", in, err)
	}
	// Completing at the bank now charges nothing.
	back(t, s, decide(t, bank, "complete"))
	h.WantStats(t, 0, 0)
	// The cart is still there to pay, with a new checkout (a new key).
	if got := cartQuantities(t, h, s.id(t)); got["tee-idempotent"] != 1 {
		t.Fatalf("cart after an abandoned authentication: got %v, want it kept", got)
	}
	retry := s.checkoutForm(t, goodCard)
	if retry.Get("idempotency_key") == key {
		t.Fatal("the new checkout reuses the abandoned key")
	}
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", retry)))
	h.WantStats(t, 1, 1)
}

// A completer pass that finds the shopper still at their bank leaves the
// key free at once, so that the shopper's return settles the order without
// waiting for the pass's lease; and the status page of an order whose
// shopper came back without confirming offers the way to the bank again,
// without sending them there by itself.
func TestThreeDSecureWhileTheShopperIsAtTheBank(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret, apptest.WithoutWebhooks, func(c *apptest.Setup) { c.CompleterGrace = time.Millisecond })
	s := newShopper(t, h)
	s.addToCart(t, "tee-idempotent")
	form := s.checkoutForm(t, authenticationCard)
	bank := bankPage(t, h, s.post(t, "/checkout", form))
	key := form.Get("idempotency_key")
	c := apptest.Customer{ID: s.id(t)}

	status := s.get(t, "/checkout/status?key="+url.QueryEscape(key))
	if to, _ := status.testid("to-bank").Attr("href"); status.status != http.StatusAccepted || to != bank ||
		status.testid("bank-waiting").Length() != 1 || status.doc.Find(`meta[http-equiv=refresh]`).Length() != 0 {
		t.Fatalf("the status page while at the bank: got %d, link %q, want 202 with a link to %s and no redirect of its own", status.status, to, bank)
	}

	h.WaitLockExpired(t, c, key)
	time.Sleep(5 * time.Millisecond) // past the completer's grace
	if n, err := h.App.Completer.Pass(t.Context()); err != nil || n != 1 {
		t.Fatalf("the completer's pass: got %d keys, %v, want it to look at the one", n, err)
	}
	if k := h.Key(t, c, key); k.Status != "started" {
		t.Fatalf("after the pass: got key %s, want it still started, the shopper being at the bank", k.Status)
	}
	receipt := back(t, s, decide(t, bank, "complete"))
	wantReceipt(t, s.follow(t, receipt))
	h.WantStats(t, 1, 1)
}
