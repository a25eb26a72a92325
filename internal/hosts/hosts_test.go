package hosts

import "testing"

func TestAllowList(t *testing.T) {
	a := New([]string{"shop.example", "localhost:9090", "[::1]:9090", " Admin.Example:8443 "})
	for host, want := range map[string]bool{
		"shop.example": true, "shop.example:8080": true, "SHOP.example.": true,
		"localhost:9090": true, "localhost:9091": false, "[::1]:9090": true,
		"admin.example:8443": true, "admin.example": false,
		"rebound.evil.example:9090": false, "shop.example.evil.example": false, "": false,
	} {
		if got := a.Allows(host); got != want {
			t.Errorf("Allows(%q): got %v, want %v", host, got, want)
		}
	}
}
