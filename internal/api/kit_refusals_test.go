package api_test

import (
	"net/http"
	"testing"

	"exactlyonce/idem"
	"exactlyonce/internal/apptest"
	"exactlyonce/internal/problem"
)

// A refusal of the kit's is answered as the kit answers it, detail
// included, on the shop's API as by the kit's own adapters (the pickup
// routes): one table, the kit's part of it.
func TestKitRefusalsAnswerAsTheKit(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "reused", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("first order: got %d %s, want 201", r.Status, r.Body)
	}
	for name, tc := range map[string]struct {
		send func() apptest.Response
		err  error
		kind problem.Kind
	}{
		"reused key": {func() apptest.Response {
			return h.PlaceOrder(t, c, "reused", `{"items":[{"sku":"mug-espresso","quantity":2}]}`)
		}, idem.ErrMismatch, problem.KeyReused},
		"missing key": {func() apptest.Response { return h.PlaceOrder(t, c, "", oneMug) }, idem.ErrMissingKey, problem.MissingKey},
	} {
		want, _ := idem.RefusalOf(tc.err)
		p := apptest.WantProblem(t, tc.send(), tc.kind)
		if p.Type != "/problems/"+want.Slug || p.Title != want.Title || p.Detail != want.Detail {
			t.Errorf("%s: got %s %q %q, want the kit's %s %q %q", name, p.Type, p.Title, p.Detail, want.Slug, want.Title, want.Detail)
		}
	}
}
