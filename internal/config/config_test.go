package config

import (
	"slices"
	"strings"
	"testing"
)

func TestShortSessionSecretRefusesToStart(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://localhost/x")
	t.Setenv("SESSION_SECRET", "too-short")
	_, err := Load()
	if err == nil || !strings.Contains(err.Error(), "SESSION_SECRET") || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("got %v, want an error naming SESSION_SECRET and its minimum", err)
	}
	t.Setenv("SESSION_SECRET", strings.Repeat("s", 32))
	if _, err := Load(); err != nil {
		t.Errorf("32-byte secret: got %v, want it accepted", err)
	}
}

func TestAllowedHosts(t *testing.T) {
	for _, tc := range []struct {
		addr, extra string
		want        []string
	}{
		{"127.0.0.1:8080", "", []string{"localhost:8080", "127.0.0.1:8080", "[::1]:8080"}},
		{":8080", "shop.example", []string{"localhost:8080", "127.0.0.1:8080", "[::1]:8080", "shop.example"}},
		{"10.0.0.5:80", " shop.example:443 , ", []string{"10.0.0.5:80", "shop.example:443"}},
	} {
		got, err := allowedHosts(tc.addr, tc.extra)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("allowedHosts(%q, %q): got %v, %v, want %v", tc.addr, tc.extra, got, err, tc.want)
		}
	}
	if _, err := allowedHosts("127.0.0.1:8080", "http://shop.example/"); err == nil {
		t.Error("a URL in ALLOWED_HOSTS: got no error")
	}
}
