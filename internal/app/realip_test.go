package app_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"exactlyonce/internal/apptest"
)

// TestRealIPIsThePeer: a client's X-Forwarded-For and X-Real-IP do not
// become the address Echo reports (c.RealIP); the connection's peer does,
// as for the quotas (web.ClientAddress). Echo v4.16 defaults to that; the
// Go vulnerability database still lists v4 under GO-2026-6872 (forwarding
// headers trusted by default, fixed in v5.1.0), and this holds the shop to
// the safe side whatever the default or an IPExtractor set later.
func TestRealIPIsThePeer(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "192.0.2.1:40000"
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	req.Header.Set("X-Real-IP", "203.0.113.10")
	c := h.App.Echo.NewContext(req, httptest.NewRecorder())
	if got := c.RealIP(); got != "192.0.2.1" {
		t.Errorf("RealIP with forwarding headers from the client: got %q, want the peer 192.0.2.1", got)
	}
}
