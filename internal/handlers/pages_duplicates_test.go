package handlers_test

// Two submits of one pay form in flight at once, and a provider that fails:
// the cases where the second request meets a key still being worked on.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
)

// holdFirst makes the first attempt wait after claiming its key until
// release is closed; claimed is closed when it has claimed.
func holdFirst(claimed, release chan struct{}) apptest.Option {
	return func(cfg *apptest.Setup) {
		withSecret(cfg)
		cfg.Hooks.AfterClaim = func(_ context.Context, c checkout.Claimed) {
			if c.TakenOver {
				return
			}
			close(claimed)
			<-release
		}
	}
}

func TestDoubleSubmitWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	claimed, release := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, holdFirst(claimed, release))
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	form := s.checkoutForm(t, goodCard)

	firstDone := make(chan page)
	go func() { firstDone <- s.post(t, "/checkout", form) }()
	<-claimed
	// The second submit meets the held key and waits; the first finishes
	// while it does.
	go func() { time.Sleep(300 * time.Millisecond); close(release) }()
	second := s.post(t, "/checkout", form)
	first := <-firstDone

	for name, p := range map[string]page{"first": first, "second": second} {
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/orders/") {
			t.Errorf("%s submit: got %d to %q, want 303 to the receipt", name, p.status, p.header.Get("Location"))
		}
	}
	if a, b := first.header.Get("Location"), second.header.Get("Location"); a != b {
		t.Errorf("got receipts %q and %q, want the same order", a, b)
	}
	// The shopper clicked once as far as they know: no already-placed note.
	if receipt := s.follow(t, second); receipt.testid("already-placed").Length() != 0 {
		t.Error("the second click's receipt carries the already-placed note")
	}
	h.WantStats(t, 1, 1)
}

func TestDoubleSubmitShowsProcessingUntilDone(t *testing.T) {
	t.Parallel()
	claimed, release := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, holdFirst(claimed, release))
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	form := s.checkoutForm(t, goodCard)

	firstDone := make(chan page)
	go func() { firstDone <- s.post(t, "/checkout", form) }()
	<-claimed
	second := s.post(t, "/checkout", form) // outwaits the hold: processing
	if second.status != http.StatusAccepted || second.testid("processing").Length() != 1 {
		t.Fatalf("second submit: got %d, want the 202 processing page", second.status)
	}
	statusURL := second.testid("check-status").AttrOr("href", "")
	if !strings.HasPrefix(statusURL, "/checkout/status?key=") {
		t.Fatalf("got status link %q", statusURL)
	}
	refresh := second.doc.Find(`meta[http-equiv=refresh]`).AttrOr("content", "")
	if !strings.HasSuffix(refresh, ";url="+statusURL) {
		t.Errorf("got meta refresh %q, want one to %s (no script needed)", refresh, statusURL)
	}
	if p := s.get(t, statusURL); p.status != http.StatusAccepted || p.testid("processing").Length() != 1 {
		t.Errorf("status while running: got %d, want processing", p.status)
	}
	// Another shopper learns nothing about the key.
	wantErrorPage(t, newShopper(t, h).get(t, statusURL), http.StatusNotFound)

	close(release)
	first := <-firstDone
	done := s.get(t, statusURL)
	if done.status != http.StatusSeeOther || done.header.Get("Location") != first.header.Get("Location") {
		t.Errorf("status when done: got %d to %q, want 303 to %q", done.status, done.header.Get("Location"), first.header.Get("Location"))
	}
	wantReceipt(t, s.follow(t, done))
	h.WantStats(t, 1, 1)
}

func TestDeclineSeenFromTheStatusPage(t *testing.T) {
	t.Parallel()
	claimed, release := make(chan struct{}), make(chan struct{})
	h := apptest.New(t, holdFirst(claimed, release))
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	form := s.checkoutForm(t, declinedCard)
	firstDone := make(chan page)
	go func() { firstDone <- s.post(t, "/checkout", form) }()
	<-claimed
	second := s.post(t, "/checkout", form)
	close(release)
	<-firstDone
	p := s.get(t, second.testid("check-status").AttrOr("href", ""))
	if p.status != http.StatusPaymentRequired || p.testid("declined").Length() != 1 {
		t.Errorf("got %d, want the declined page", p.status)
	}
	h.WantStats(t, 0, 0)
}

func TestProviderOutageRetriesSafely(t *testing.T) {
	for _, fault := range []string{"before_charge", "after_charge"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			h := apptest.New(t, func(cfg *apptest.Setup) {
				withSecret(cfg)
				cfg.LockTimeout = time.Second
			})
			s := newShopper(t, h)
			s.addToCart(t, "book-retries")
			form := s.checkoutForm(t, goodCard)
			h.SetProvider(t, 0, fault)

			p := s.post(t, "/checkout", form)
			if p.status != http.StatusBadGateway || p.testid("provider-outage").Length() != 1 {
				t.Fatalf("got %d, want the 502 outage page", p.status)
			}
			if p.header.Get("Retry-After") == "" {
				t.Error("outage page without Retry-After")
			}
			retry := formValues(p.testid("retry-form"))
			if retry.Get("idempotency_key") != form.Get("idempotency_key") {
				t.Fatalf("retry form has key %q, want the same key %q", retry.Get("idempotency_key"), form.Get("idempotency_key"))
			}
			if retry.Get("card") != goodCard {
				t.Errorf("got card %q in the retry form, want the one typed: the answer to its POST keeps it", retry.Get("card"))
			}
			if !strings.Contains(p.text("card-hint"), "4242") {
				t.Errorf("got card hint %q, want the last four digits", p.text("card-hint"))
			}
			h.SetProvider(t, 0, "none")
			h.WaitLockExpired(t, apptest.Customer{ID: s.id(t)}, form.Get("idempotency_key"))
			wantReceipt(t, s.follow(t, s.post(t, "/checkout", retry)))
			h.WantStats(t, 1, 1)
		})
	}
}

func TestStatusOffersToResumeAnAbandonedOrder(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, func(cfg *apptest.Setup) {
		withSecret(cfg)
		cfg.LockTimeout = 30 * time.Second
	})
	s := newShopper(t, h)
	s.addToCart(t, "sticker-pack")
	form := s.checkoutForm(t, goodCard)
	h.SetProvider(t, 0, "after_charge")
	// The browser that sent this never saw the outage page (a second click
	// replaced it), so the status page is all it has.
	if p := s.post(t, "/checkout", form); p.testid("provider-outage").Length() != 1 {
		t.Fatalf("got %d, want the outage page", p.status)
	}
	h.SetProvider(t, 0, "none")
	key := form.Get("idempotency_key")
	statusURL := "/checkout/status?key=" + key
	// The attempt handed its key back when the provider's answers were
	// lost, so the status page offers to resume it at once, under the 30 s
	// lock, and does not reload itself over the form.
	p := s.get(t, statusURL)
	retry := formValues(p.testid("retry-form"))
	if p.testid("processing").Length() != 1 || retry.Get("idempotency_key") != key {
		t.Fatalf("after the outage: got %d and retry key %q, want processing with a retry of key %q", p.status, retry.Get("idempotency_key"), key)
	}
	if refresh := p.doc.Find(`meta[http-equiv="refresh"]`).Length(); refresh != 0 || p.header.Get("Refresh") != "" {
		t.Errorf("a page with a form reloads itself (%d meta refresh, Refresh %q), wiping what is typed into it", refresh, p.header.Get("Refresh"))
	}
	retry.Set("card", goodCard)
	wantReceipt(t, s.follow(t, s.post(t, "/checkout", retry)))
	h.WantStats(t, 1, 1)
}

func TestStatusPageRefusesKeysNoFormCarries(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	for _, key := range []string{"%00", "%FF", "a%00b", "%C3%A9"} {
		if p := s.get(t, "/checkout/status?key="+key); p.status != http.StatusNotFound {
			t.Errorf("key=%s: got %d, want 404", key, p.status)
		}
	}
}
