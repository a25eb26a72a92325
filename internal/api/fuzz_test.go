package api

// Fuzz targets of the two parsers every API order goes through. Their seed
// corpora are in testdata/fuzz; `make fuzz` runs them for longer.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/web"
)

// wantClientError fails unless the error table answers err as a problem
// the client caused: a 4xx, never a 5xx, which is its answer to an
// unexpected error.
func wantClientError(t *testing.T, err error) {
	t.Helper()
	if f := web.Classify(err); f.Kind.Status < 400 || f.Kind.Status >= 500 {
		t.Fatalf("got error %v, answered %d, want a 4xx problem", err, f.Kind.Status)
	}
}

func FuzzIdempotencyKey(f *testing.F) {
	for _, seed := range []string{"k", "8e03978e-40d5-43e8-bc93-6894a57f9324", `"8e03978e"`, `"a\"b"`, `"abc";x=1`, `""`, " k ", "clé", "\x00", strings.Repeat("k", 256)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		key, err := parseIdempotencyKey([]string{raw})
		if err != nil {
			wantClientError(t, err)
			return
		}
		if idem.CheckKey(key) != nil {
			t.Fatalf("accepted key %q that idem.CheckKey refuses", key)
		}
		// The same key sent in the Structured Field form is the same key.
		quoted := strconv.Quote(key) // printable ASCII: only \ and " are escaped, as RFC 8941 does
		again, err := parseIdempotencyKey([]string{quoted})
		if err != nil || again != key {
			t.Fatalf("key %q sent as %s: got %q, %v", key, quoted, again, err)
		}
	})
}

func FuzzOrderBody(f *testing.F) {
	for _, seed := range []string{
		`{"items": [{"sku": "mug-espresso", "quantity": 1}]}`,
		`{"items": [{"sku": "a", "quantity": 2}, {"sku": "b", "quantity": 1}], "card": "4242 4242-4242 4242"}`,
		`{"items": [{"sku": "a", "quantity": 1}], "card": "4000002760003184", "return_url": "https://client.example/back?x=1"}`,
		`{"items": [{"sku": "a", "quantity": 1}], "return_url": "/relative"}`,
		`{"items": [], "Items": []}`,
		`{"items": [{"sku": "a", "quantity": 1}], "items": []}`,
		`{"Card": "4242424242424242"}`,
		`{"items": [{"sku": "a", "quantity": 1}]}]`,
		`{"items": [{"sku": "a\u0000", "quantity": 1e3}]}`,
		"{\"items\": [{\"sku\": \"\xff\", \"quantity\": 1}]}",
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, fp, err := decodeOrder(body)
		if err != nil {
			wantClientError(t, err)
			return
		}
		// The body fingerprinted is canonical by construction: what the
		// kit's rule makes of it (idem.NormalizeJSON) is the same.
		canonical := canonicalAsStored(t, req)
		if want := checkout.Fingerprint(http.MethodPost, orderRoute, idem.NormalizeJSON(canonical)); !bytes.Equal(fp, want) {
			t.Fatalf("body %q: fingerprint %x, want %x, the kit's rule of the canonical order", body, fp, want)
		}
		// Equal requests hash equal: the decoded order, written out again
		// with its items in reverse order, is the same order.
		reversed := req
		reversed.Items = slices.Clone(req.Items)
		slices.Reverse(reversed.Items)
		again, err := json.Marshal(reversed)
		if err != nil {
			t.Fatal(err)
		}
		_, fp2, err := decodeOrder(again)
		if err != nil {
			t.Fatalf("the decoded order %s, encoded again, is refused: %v", again, err)
		}
		if !bytes.Equal(fp, fp2) {
			t.Fatalf("body %q and its decoded order %s hash differently", body, again)
		}
	})
}

// canonicalAsStored is the order's canonical body, the items sorted and
// encoded with catalog.Item's field order.
func canonicalAsStored(t *testing.T, r orderRequest) []byte {
	t.Helper()
	items := slices.Clone(r.Items)
	slices.SortStableFunc(items, func(a, b catalog.Item) int {
		return cmp.Or(strings.Compare(a.SKU, b.SKU), cmp.Compare(a.Quantity, b.Quantity))
	})
	body, err := json.Marshal(struct {
		Items     []catalog.Item `json:"items"`
		CardLast4 string         `json:"card_last4"`
		ReturnURL string         `json:"return_url,omitempty"`
	}{items, r.Card[max(0, len(r.Card)-4):], r.ReturnURL})
	if err != nil {
		t.Fatal(err)
	}
	return body
}
