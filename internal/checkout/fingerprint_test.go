package checkout_test

import (
	"bytes"
	"testing"

	"exactlyonce/internal/checkout"
)

func TestFingerprint(t *testing.T) {
	fp := func(method, route, body string) []byte {
		t.Helper()
		b, err := checkout.Fingerprint(method, route, []byte(body))
		if err != nil {
			t.Fatalf("fingerprint %s: %v", body, err)
		}
		return b
	}
	base := fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":1}],"card":"4242424242424242"}`)
	same := map[string][]byte{
		"key order and whitespace": fp("POST", "/api/orders", "{ \"card\": \"4242424242424242\",\n \"items\": [ {\"quantity\": 1, \"sku\": \"a\"} ] }"),
		// Only the card's last four digits count, so no reversible hash of
		// a whole card number is ever stored.
		"card with the same last four": fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":1}],"card":"5555555555554242"}`),
	}
	for name, got := range same {
		if !bytes.Equal(got, base) {
			t.Errorf("%s: got a different fingerprint, want the same", name)
		}
	}
	different := map[string][]byte{
		"quantity":    fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":2}],"card":"4242424242424242"}`),
		"number form": fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":1.0}],"card":"4242424242424242"}`),
		"route":       fp("POST", "/checkout", `{"items":[{"sku":"a","quantity":1}],"card":"4242424242424242"}`),
		"card":        fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":1}],"card":"4000000000000002"}`),
	}
	for name, got := range different {
		if bytes.Equal(got, base) {
			t.Errorf("%s: got the same fingerprint, want a different one", name)
		}
	}
	if _, err := checkout.Fingerprint("POST", "/api/orders", []byte(`{"items": [`)); err == nil {
		t.Error("malformed JSON: got no error")
	}
}
