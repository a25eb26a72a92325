package api_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
)

// TestOptionsAnswersWhatAllowSays: a 405's Allow header lists OPTIONS, so
// OPTIONS must answer (204 with the same list), on the API's paths, which
// a catch-all would otherwise answer 404, and on the pages' alike. It
// needs no token: it says what the path serves, not what is in it.
func TestOptionsAnswersWhatAllowSays(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	for path, allow := range map[string]string{
		"/api/orders":        "POST, GET, OPTIONS",
		"/api/orders/123":    "GET, OPTIONS",
		"/api/carts/1/order": "POST, OPTIONS",
		"/checkout":          "GET, POST, OPTIONS",
	} {
		r := h.Do(t, http.MethodOptions, path, "")
		if r.Status != http.StatusNoContent || r.Header.Get("Allow") != allow || len(r.Body) != 0 {
			t.Errorf("OPTIONS %s: got %d, Allow %q, body %q; want 204, Allow %q, no body",
				path, r.Status, r.Header.Get("Allow"), r.Body, allow)
		}
	}
}

// TestRefusalsSayWhatToSend: the 405 names the methods the path allows and
// the 415 the media type to send, in the detail a developer reads.
func TestRefusalsSayWhatToSend(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	p := apptest.WantProblem(t, h.Do(t, http.MethodPut, "/api/orders", `{}`), problem.MethodNotAllowed)
	if !strings.Contains(p.Detail, "PUT") || !strings.Contains(p.Detail, "POST, GET, OPTIONS") {
		t.Errorf("405: got detail %q, want the method refused and the ones allowed", p.Detail)
	}
	// No body: Do would then set application/json itself.
	p = apptest.WantProblem(t, h.Do(t, http.MethodPost, "/api/orders", "",
		"Authorization", "Bearer "+c.Token, "Idempotency-Key", "k", "Content-Type", "application/x-www-form-urlencoded"),
		problem.UnsupportedMediaType)
	if !strings.Contains(p.Detail, "application/json") {
		t.Errorf("415: got detail %q, want it to say to send application/json", p.Detail)
	}
}

// TestInvalidBodiesPointAtTheField: every 400 about a body's content
// carries RFC 9457's errors member, each with a JSON Pointer to the value
// at fault, so a client can show the message beside its field; none stores
// anything.
func TestInvalidBodiesPointAtTheField(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	for _, tc := range []struct{ name, body, pointer string }{
		{"wrong type", `{"items": [{"sku": "mug-espresso", "quantity": "two"}]}`, "#/items/0/quantity"},
		{"unknown member", `{"items": [{"sku": "mug-espresso", "quantity": 1}], "Card": "4242424242424242"}`, "#/Card"},
		{"quantity out of range", `{"items": [{"sku": "mug-espresso", "quantity": 1}, {"sku": "sticker-pack", "quantity": 0}]}`, "#/items/1/quantity"},
		{"unknown sku", `{"items": [{"sku": "no-such-thing", "quantity": 1}]}`, "#/items/0/sku"},
		{"no items", `{"items": []}`, "#/items"},
		{"card", `{"items": [{"sku": "mug-espresso", "quantity": 1}], "card": "4242424242424241"}`, "#/card"},
		{"return_url", `{"items": [{"sku": "mug-espresso", "quantity": 1}], "return_url": "javascript:alert(1)"}`, "#/return_url"},
		{"not JSON", `{"items": [`, "#"},
	} {
		p := apptest.WantProblem(t, h.PlaceOrder(t, c, "k-"+tc.name, tc.body), problem.InvalidRequest)
		if len(p.Errors) != 1 || p.Errors[0].Pointer != tc.pointer || p.Errors[0].Detail == "" {
			t.Errorf("%s: got errors %+v, want one at %s with a detail", tc.name, p.Errors, tc.pointer)
		}
	}
	r := h.Do(t, http.MethodPost, "/api/pickups", `{"slot": "mon-am", "name": ""}`,
		"Authorization", "Bearer "+c.Token, "Idempotency-Key", "p-1")
	if p := apptest.WantProblem(t, r, problem.InvalidRequest); len(p.Errors) != 1 || !reflect.DeepEqual(p.Errors, problem.At("/name", p.Errors[0].Detail)) {
		t.Errorf("pickup: got errors %+v, want one at #/name", p.Errors)
	}
	wantNoKeys(t, h)
}
