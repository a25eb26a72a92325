package handlers_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"exactlyonce/idem"
	"exactlyonce/internal/apptest"
)

// A shopper cancels an order from its page with a double click: both
// submits land on the order's page, which says it is cancelled; one refund
// of the whole amount at the provider, and the form is gone. The page
// opened in another tab before the cancel, sent afterwards under its own
// key, is told the order is cancelled and refunds nothing.
func TestCancelFromTheOrderPage(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret, apptest.WithoutWebhooks)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	receipt := s.follow(t, s.post(t, "/checkout", s.checkoutForm(t, goodCard)))
	form := receipt.testid("cancel-form")
	if form.Length() != 1 {
		t.Fatalf("the order's page has no cancel form")
	}
	action, _ := form.Attr("action")
	values := formValues(form)
	other := formValues(s.get(t, strings.TrimSuffix(action, "/cancel")).testid("cancel-form")) // a second tab

	var wg sync.WaitGroup
	answers := make([]page, 2)
	for i := range answers {
		wg.Go(func() { answers[i] = s.post(t, action, values) })
	}
	wg.Wait()
	for _, a := range answers {
		if a.status != http.StatusSeeOther || !strings.HasSuffix(a.header.Get("Location"), "?cancel=refunded") {
			t.Fatalf("a submit of the double click: got %d to %q, want 303 to the order's page", a.status, a.header.Get("Location"))
		}
	}
	cancelled := s.follow(t, answers[0])
	if cancelled.testid("order-cancelled").Length() != 1 || cancelled.testid("cancelled-note").Length() != 1 {
		t.Errorf("the order's page after the cancel does not say it is cancelled")
	}
	if cancelled.testid("cancel-form").Length() != 0 {
		t.Errorf("the order's page still offers to cancel a cancelled order")
	}
	if rows := cancelled.testid("refund-row"); rows.Length() != 1 {
		t.Errorf("the order's page lists %d refunds, want 1", rows.Length())
	}
	if n := h.Count(t, `SELECT count(*) FROM fakestripe.refunds`); n != 1 {
		t.Errorf("refunds at the provider: %d, want 1", n)
	}
	wantErrorPage(t, s.post(t, action, other), http.StatusConflict)
	if n := h.Count(t, `SELECT count(*) FROM fakestripe.refunds`); n != 1 {
		t.Errorf("refunds at the provider after the second tab's cancel: %d, want 1", n)
	}
}

// A cancel form is bound to its shopper and its order: another shopper's
// session, or the key moved to another order's form, is refused and
// refunds nothing.
func TestCancelFormIsBoundToItsOrderAndShopper(t *testing.T) {
	t.Parallel()
	h := apptest.New(t, withSecret, apptest.WithoutWebhooks)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	first := s.follow(t, s.post(t, "/checkout", s.checkoutForm(t, goodCard)))
	s.addToCart(t, "mug-espresso")
	second := s.follow(t, s.post(t, "/checkout", s.checkoutForm(t, goodCard)))
	firstForm, secondForm := first.testid("cancel-form"), second.testid("cancel-form")
	secondAction, _ := secondForm.Attr("action")
	moved := formValues(secondForm)
	for k, v := range formValues(firstForm) {
		if k == idem.KeyField || k == idem.SigField {
			moved[k] = v
		}
	}
	p := s.post(t, secondAction, moved)
	wantErrorPage(t, p, http.StatusBadRequest)
	if next, _ := p.doc.Find(`[data-testid=error-action]`).Attr("href"); next != "/orders" {
		t.Errorf("the refusal leads to %q, want back to the orders", next)
	}
	stranger := newShopper(t, h)
	stranger.get(t, "/")
	if p := stranger.post(t, secondAction, formValues(secondForm)); p.status < 400 {
		t.Errorf("another shopper sending the form: got %d, want a refusal", p.status)
	}
	if n := h.Count(t, `SELECT count(*) FROM fakestripe.refunds`); n != 0 {
		t.Errorf("refunds at the provider: %d, want none", n)
	}
}
