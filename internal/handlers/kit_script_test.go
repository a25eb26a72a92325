package handlers_test

import (
	"io/fs"
	"net/http"
	"strings"
	"testing"

	"exactlyonce/idem/idemjs"
	"exactlyonce/internal/apptest"
)

// The pay and pickup forms name the kit's module (static/app.js sends them
// through it), and the shop serves that module, the kit's own file, as
// JavaScript under its hashed URL, cached for good.
func TestFormsLinkTheKitsModule(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	s := newShopper(t, h)
	s.addToCart(t, "mug-espresso")
	want, err := fs.ReadFile(idemjs.FS, "idem.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, form string }{
		{"/checkout", "[data-testid=checkout-form]"},
		{"/pickup", "[data-testid=pickup-form]"},
	} {
		src := s.get(t, tc.path).doc.Find(tc.form).AttrOr("data-idem-js", "")
		if !strings.HasPrefix(src, "/static/idem/idem.js?v=") {
			t.Fatalf("%s: the form names the module at %q, want /static/idem/idem.js?v=…", tc.path, src)
		}
		r := h.Do(t, http.MethodGet, src, "")
		if r.Status != http.StatusOK || string(r.Body) != string(want) {
			t.Fatalf("GET %s: got %d and %d bytes, want 200 and the kit's idem.js", src, r.Status, len(r.Body))
		}
		if got := r.Header.Get("Content-Type"); !strings.HasPrefix(got, "text/javascript") {
			t.Errorf("GET %s: got Content-Type %q, want text/javascript (a browser runs a module of no other type)", src, got)
		}
		if got := r.Header.Get("Cache-Control"); !strings.Contains(got, "immutable") {
			t.Errorf("GET %s: got Cache-Control %q, want immutable for the hashed URL", src, got)
		}
	}
}
