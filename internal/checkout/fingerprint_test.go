package checkout_test

import (
	"bytes"
	"testing"

	"exactlyonce/idem"
	"exactlyonce/internal/checkout"
)

func TestFingerprint(t *testing.T) {
	fp := func(method, route, body string) []byte {
		return checkout.Fingerprint(method, route, idem.NormalizeJSON([]byte(body)))
	}
	base := fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":1}],"card_last4":"4242"}`)
	if got := fp("POST", "/api/orders", "{ \"card_last4\": \"4242\",\n \"items\": [ {\"quantity\": 1, \"sku\": \"a\"} ] }"); !bytes.Equal(got, base) {
		t.Error("member order and whitespace: got a different fingerprint, want the same")
	}
	for name, got := range map[string][]byte{
		"quantity":    fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":2}],"card_last4":"4242"}`),
		"number form": fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":1.0}],"card_last4":"4242"}`),
		"route":       fp("POST", "/checkout", `{"items":[{"sku":"a","quantity":1}],"card_last4":"4242"}`),
		"card":        fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":1}],"card_last4":"0002"}`),
	} {
		if bytes.Equal(got, base) {
			t.Errorf("%s: got the same fingerprint, want a different one", name)
		}
	}
	if !bytes.Equal(base, idem.Fingerprint([]byte("POST"), []byte("/api/orders"), idem.NormalizeJSON([]byte(`{"items":[{"sku":"a","quantity":1}],"card_last4":"4242"}`)))) {
		t.Error("got a fingerprint other than the kit's rule gives")
	}
}
