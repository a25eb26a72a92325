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

// The rule before the kit's, kept for the keys claimed under it.
func TestLegacyFingerprint(t *testing.T) {
	fp := func(method, route, body string) []byte {
		t.Helper()
		b, err := checkout.LegacyFingerprint(method, route, []byte(body))
		if err != nil {
			t.Fatalf("fingerprint %s: %v", body, err)
		}
		return b
	}
	base := fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":1}],"card":"4242424242424242"}`)
	for name, got := range map[string][]byte{
		"key order and whitespace":     fp("POST", "/api/orders", "{ \"card\": \"4242424242424242\",\n \"items\": [ {\"quantity\": 1, \"sku\": \"a\"} ] }"),
		"card with the same last four": fp("POST", "/api/orders", `{"items":[{"sku":"a","quantity":1}],"card":"5555555555554242"}`),
	} {
		if !bytes.Equal(got, base) {
			t.Errorf("%s: got a different fingerprint, want the same", name)
		}
	}
	if _, err := checkout.LegacyFingerprint("POST", "/api/orders", []byte(`{"items": [`)); err == nil {
		t.Error("malformed JSON: got no error")
	}
	canonical := []byte(`{"card_last4":"4242","items":[{"quantity":1,"sku":"a"}]}`)
	if want, _ := checkout.LegacyFingerprint("POST", "/api/orders", canonical); !bytes.Equal(checkout.LegacyCanonicalFingerprint("POST", "/api/orders", canonical), want) {
		t.Error("LegacyCanonicalFingerprint of a canonical body differs from LegacyFingerprint's")
	}
}
