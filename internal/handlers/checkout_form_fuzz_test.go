package handlers

import (
	"errors"
	"net/url"
	"reflect"
	"testing"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/web"
)

// FuzzParseSubmission feeds the checkout form decoder arbitrary form bodies.
// Invariants: no panic; a refusal is a page error with a 4xx status; the
// same body decodes to the same result; an accepted form holds 1 to
// MaxLines lines and a card of digits only.
func FuzzParseSubmission(f *testing.F) {
	valid := "csrf_token=t&idempotency_key=0190d5f0-aaaa-7bbb-8ccc-dddddddddddd&key_sig=s" +
		"&cart_id=0190d5f0-2222-7000-8000-000000000002&cart_version=1&sku=mug-espresso&quantity=1&amount=1200&card=4242+4242+4242+4242"
	for _, seed := range []string{
		valid,
		"",
		"sku=a&sku=b&quantity=1",
		"cart_id=x&cart_version=1&sku=a&quantity=1&amount=1",
		"cart_id=0190d5f0-2222-7000-8000-000000000002&cart_version=99999999999999999999&sku=a&quantity=1&amount=1",
		"cart_id=0190d5f0-2222-7000-8000-000000000002&cart_version=1&sku=%00&quantity=-1&amount=-5&card=%FF",
		"cart_id=0190d5f0-2222-7000-8000-000000000002&cart_version=1&sku=a&quantity=1e3&amount=0x10",
		"%zz=1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		form, err := url.ParseQuery(body)
		if err != nil {
			return // net/http refuses such a body before the decoder runs
		}
		sub, err := parseSubmission(form)
		again, err2 := parseSubmission(form)
		if !reflect.DeepEqual(sub, again) || (err == nil) != (err2 == nil) {
			t.Fatalf("the same body decoded to %+v (%v), then %+v (%v)", sub, err, again, err2)
		}
		if err != nil {
			var pe *web.PageError
			if !errors.As(err, &pe) || pe.Status < 400 || pe.Status >= 500 {
				t.Fatalf("got %v, want a 4xx page error", err)
			}
			return
		}
		if len(sub.items) < 1 || len(sub.items) > catalog.MaxLines {
			t.Fatalf("accepted %d lines, want 1 to %d", len(sub.items), catalog.MaxLines)
		}
		for _, r := range sub.card {
			if r == ' ' || r == '-' {
				t.Fatalf("card %q kept a separator", sub.card)
			}
		}
		fp, err := sub.fingerprint()
		if err != nil || len(fp) == 0 {
			t.Fatalf("fingerprint of an accepted form: %v", err)
		}
		if again, _ := sub.fingerprint(); string(again) != string(fp) {
			t.Fatal("the same form got two fingerprints")
		}
	})
}
