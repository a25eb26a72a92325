package web

import (
	"strings"
	"testing"
)

// orderRequest has the shape of the API's order body.
type orderRequest struct {
	Items []struct {
		SKU      string `json:"sku"`
		Quantity int    `json:"quantity"`
	} `json:"items"`
	Card string `json:"card,omitempty"`
}

// TestDecodeStrictSaysWhatIsWrong checks the detail each refused body gets:
// the client must learn which member or byte to fix.
func TestDecodeStrictSaysWhatIsWrong(t *testing.T) {
	for body, want := range map[string]string{
		`{"items":[{"sku":"mug","quantity":1}],"Card":"4242"}`: `unknown member "Card" (names are case-sensitive)`,
		`{"items":[{"sku":"mug","sku":"pen","quantity":1}]}`:   `member "sku" appears twice`,
		`{"items":[{"sku":"mug","quantity":"1"}]}`:             `/items/0/quantity must be a whole number, got string`,
		`{"items":{}}`:                          `/items must be an array, got object`,
		`{"items":[]}]`:                         `the body holds more than one JSON value`,
		`{"items":[]} {}`:                       `the body holds more than one JSON value`,
		`{"items":[`:                            `the body ends too early`,
		``:                                      `the body is empty`,
		`{"items" [] }`:                         `syntax error at byte 9`,
		"{\"card\":\"\xff\"}":                   `the body is not valid UTF-8`,
		`{"` + strings.Repeat("x", 60) + `":1}`: `unknown member "` + strings.Repeat("x", 40) + `…"`,
	} {
		var req orderRequest
		err := DecodeStrict([]byte(body), &req)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want it to say %s", body, err, want)
		}
	}
	var req orderRequest
	if err := DecodeStrict([]byte(" {\"items\":[{\"sku\":\"mug\",\"quantity\":2}],\"card\":\"4242\"}\n"), &req); err != nil {
		t.Fatalf("a valid body: %v", err)
	}
	if len(req.Items) != 1 || req.Items[0].Quantity != 2 || req.Card != "4242" {
		t.Fatalf("decoded %+v", req)
	}
}
