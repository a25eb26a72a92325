package web_test

import (
	"net/http/httptest"
	"testing"

	"exactlyonce/internal/web"
)

func TestReachableURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base, host, want string
	}{
		// A host a browser opens is kept, whatever r reached.
		{"http://127.0.0.1:9090/", "shop.example:8080", "http://127.0.0.1:9090"},
		{"http://[::1]:9090", "shop.example:8080", "http://[::1]:9090"},
		{"https://admin.example/ops/", "shop.example", "https://admin.example/ops"},
		// An unspecified host takes r's host, with the base's port.
		{"http://0.0.0.0:9090", "192.0.2.7:8080", "http://192.0.2.7:9090"},
		{"http://[::]:9090/", "shop.example:8080", "http://shop.example:9090"},
		{"http://[::]:9090", "[2001:db8::7]:8080", "http://[2001:db8::7]:9090"},
		{"http://0.0.0.0:9090", "[2001:db8::7]", "http://[2001:db8::7]:9090"},
		{"http://[::]:9090", "shop.example", "http://shop.example:9090"},
		// No port in the base: none after the colon either.
		{"http://[::]/", "shop.example:8080", "http://shop.example:"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = tc.host
		got, err := web.ReachableURL(tc.base, r)
		if err != nil || got != tc.want {
			t.Errorf("ReachableURL(%q) from Host %q: got %q, %v; want %q", tc.base, tc.host, got, err, tc.want)
		}
	}
	if got, err := web.ReachableURL("http://[::1", httptest.NewRequest("GET", "/", nil)); err == nil {
		t.Errorf("ReachableURL of a base that does not parse: got %q, want an error", got)
	}
}
