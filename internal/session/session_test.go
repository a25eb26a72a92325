package session_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"

	"exactlyonce/internal/session"
)

// carry returns a request holding the cookies w set.
func carry(w *httptest.ResponseRecorder) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, c := range w.Result().Cookies() {
		r.AddCookie(c)
	}
	return r
}

func TestShopperRoundTrip(t *testing.T) {
	s := session.New([]byte("secret"))
	id := uuid.New()
	w := httptest.NewRecorder()
	if err := s.SetShopper(w, httptest.NewRequest(http.MethodGet, "/", nil), id); err != nil {
		t.Fatal(err)
	}
	c := w.Result().Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Errorf("got cookie %+v, want HttpOnly and SameSite=Lax", c)
	}
	if got, ok := s.Shopper(carry(w)); !ok || got != id {
		t.Errorf("got %v %v, want %v", got, ok, id)
	}
	if _, ok := session.New([]byte("another secret")).Shopper(carry(w)); ok {
		t.Error("a cookie signed with another secret was accepted")
	}
	forged := httptest.NewRequest(http.MethodGet, "/", nil)
	forged.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value[:len(c.Value)-2] + "AA"})
	if _, ok := s.Shopper(forged); ok {
		t.Error("a tampered cookie was accepted")
	}
}

func TestCSRF(t *testing.T) {
	s := session.New([]byte("secret"))
	w := httptest.NewRecorder()
	token, err := s.CSRFToken(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if err != nil {
		t.Fatal(err)
	}
	r := carry(w)
	if err := s.CheckCSRF(r, token); err != nil {
		t.Errorf("matching token: got %v, want nil", err)
	}
	again := httptest.NewRecorder()
	if same, _ := s.CSRFToken(again, r); same != token || len(again.Result().Cookies()) != 0 {
		t.Errorf("second page: got token %q and %d cookies, want the same token and no cookie", same, len(again.Result().Cookies()))
	}
	if err := s.CheckCSRF(r, token+"x"); !errors.Is(err, session.ErrCSRFInvalid) {
		t.Errorf("wrong token: got %v, want ErrCSRFInvalid", err)
	}
	if err := s.CheckCSRF(r, ""); !errors.Is(err, session.ErrCSRFMissing) {
		t.Errorf("no token: got %v, want ErrCSRFMissing", err)
	}
	if err := s.CheckCSRF(httptest.NewRequest(http.MethodPost, "/", nil), token); !errors.Is(err, session.ErrCSRFInvalid) {
		t.Errorf("no cookie: got %v, want ErrCSRFInvalid", err)
	}
}
