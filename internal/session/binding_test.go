package session_test

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"exactlyonce/internal/session"
)

// A CSRF cookie and token taken from one session (an attacker's own
// browser) and planted with another shopper's session are refused.
func TestCSRFTokenIsBoundToTheSession(t *testing.T) {
	s := session.New([]byte("secret"))
	// The attacker's pair, issued to the attacker's session.
	attacker := httptest.NewRecorder()
	if err := s.SetShopper(attacker, httptest.NewRequest(http.MethodGet, "/", nil), uuid.New()); err != nil {
		t.Fatal(err)
	}
	page := httptest.NewRecorder()
	attackerReq := carry(attacker)
	token, err := s.CSRFToken(page, attackerReq)
	if err != nil {
		t.Fatal(err)
	}
	csrf := page.Result().Cookies()
	for _, c := range csrf {
		attackerReq.AddCookie(c)
	}
	if err := s.CheckCSRF(attackerReq, token); err != nil {
		t.Fatalf("own session: got %v, want the pair accepted", err)
	}
	// The victim's session cookie with the attacker's CSRF cookie.
	victim := httptest.NewRecorder()
	if err := s.SetShopper(victim, httptest.NewRequest(http.MethodGet, "/", nil), uuid.New()); err != nil {
		t.Fatal(err)
	}
	r := carry(victim)
	for _, c := range csrf {
		r.AddCookie(c)
	}
	if err := s.CheckCSRF(r, token); !errors.Is(err, session.ErrCSRFInvalid) {
		t.Errorf("another session: got %v, want ErrCSRFInvalid", err)
	}
	// A page for the victim issues a token of the victim's own.
	w := httptest.NewRecorder()
	if own, err := s.CSRFToken(w, r); err != nil || own == token {
		t.Errorf("got token %q, %v, want a new one bound to the victim's session", own, err)
	}
}

func TestCookiesUseTheHostPrefixOverTLS(t *testing.T) {
	s := session.New([]byte("secret"))
	for name, r := range map[string]*http.Request{
		"TLS": func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.TLS = &tls.ConnectionState{}
			return r
		}(),
		"forwarded HTTPS": func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("X-Forwarded-Proto", "https")
			return r
		}(),
	} {
		w := httptest.NewRecorder()
		id := uuid.New()
		if err := s.SetShopper(w, r, id); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CSRFToken(w, r); err != nil {
			t.Fatal(err)
		}
		for _, c := range w.Result().Cookies() {
			if !strings.HasPrefix(c.Name, "__Host-") || !c.Secure || c.Path != "/" || c.Domain != "" {
				t.Errorf("%s: got cookie %s (Secure %v, Path %q, Domain %q), want __Host- prefixed, Secure, Path=/ and no Domain",
					name, c.Name, c.Secure, c.Path, c.Domain)
			}
		}
		back := r.Clone(r.Context())
		for _, c := range w.Result().Cookies() {
			back.AddCookie(c)
		}
		if got, ok := s.Shopper(back); !ok || got != id {
			t.Errorf("%s: got %v %v reading the prefixed cookie back, want %v", name, got, ok, id)
		}
	}
	// Over plain HTTP a browser would drop a prefixed cookie.
	w := httptest.NewRecorder()
	if err := s.SetShopper(w, httptest.NewRequest(http.MethodGet, "/", nil), uuid.New()); err != nil {
		t.Fatal(err)
	}
	if c := w.Result().Cookies()[0]; strings.HasPrefix(c.Name, "__Host-") {
		t.Errorf("plain HTTP: got cookie %s, want no prefix", c.Name)
	}
}
