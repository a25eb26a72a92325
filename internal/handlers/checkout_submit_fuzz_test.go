package handlers_test

import (
	"net/http"
	"net/url"
	"testing"

	"exactlyonce/internal/apptest"
)

// FuzzCheckoutSubmit posts a shopper's real checkout form with fields
// replaced by the fuzzer's, through the whole application (session, CSRF,
// signature, engine, database). Invariants: never a 5xx, and the same form
// sent twice gets the same status (a placed order is replayed, a refusal
// refused again).
func FuzzCheckoutSubmit(f *testing.F) {
	for _, seed := range []string{
		"",
		"quantity=0",
		"amount=1",
		"amount=abc",
		"cart_version=-1",
		"cart_version=2",
		"cart_id=00000000-0000-0000-0000-000000000000",
		"sku=%00",
		"sku=no-such-thing",
		"card=abc",
		"card=4000+0000+0000+0002",
		"card=%00%FF",
		"idempotency_key=%FF",
		"idempotency_key=",
		"key_sig=",
		"sku=a&sku=b",
		"quantity=1e309",
	} {
		f.Add(seed)
	}
	h := apptest.New(f, withSecret)
	s := newShopper(f, h)
	s.addToCart(f, "mug-espresso")
	form := s.checkoutForm(f, goodCard)
	f.Fuzz(func(t *testing.T, fields string) {
		changes, err := url.ParseQuery(fields)
		if err != nil {
			return // not a form body a browser sends
		}
		sent := cloneValues(form)
		for name, values := range changes {
			sent[name] = values
		}
		first := s.post(t, "/checkout", sent)
		second := s.post(t, "/checkout", sent)
		if first.status >= http.StatusInternalServerError || second.status >= http.StatusInternalServerError {
			t.Fatalf("got %d then %d, want no 5xx", first.status, second.status)
		}
		if first.status != second.status {
			t.Fatalf("the same form got %d, then %d", first.status, second.status)
		}
	})
}
