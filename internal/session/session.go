// Package session keeps a browser shopper's state in two cookies the server
// signs and encrypts, so that they cannot be forged or read: who the shopper
// is, and the token that proves a form was rendered by this site (CSRF).
//
// A shopper is an anonymous customer. Its id is minted the first time the
// shopper needs one, so idempotency keys are scoped per shopper exactly as
// the API scopes them per token. Nothing else is kept in the cookies.
package session

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/securecookie"
)

// Cookie names. The session cookie is Lax so that following a link to the
// shop from elsewhere keeps the shopper signed in; the CSRF cookie is Strict
// because only forms of this site ever need it.
const (
	shopperCookie = "shop_session"
	csrfCookie    = "shop_csrf"
)

// MaxAge is how long a shopper's session lasts after its last renewal.
const MaxAge = 30 * 24 * time.Hour

// Why a form's CSRF token was refused.
var (
	ErrCSRFMissing = errors.New("the form carries no CSRF token")
	ErrCSRFInvalid = errors.New("the form's CSRF token does not match its cookie")
)

// Store reads and writes the cookies. It is safe for concurrent use.
type Store struct {
	codec *securecookie.SecureCookie
}

// New returns a Store whose cookies are signed and encrypted with keys
// derived from secret. Processes that share the secret share sessions.
func New(secret []byte) *Store {
	codec := securecookie.New(derive(secret, "session/hash"), derive(secret, "session/block"))
	codec.MaxAge(int(MaxAge.Seconds()))
	codec.SetSerializer(securecookie.JSONEncoder{})
	return &Store{codec: codec}
}

// RandomSecret returns a secret for a process that has none configured.
func RandomSecret() []byte {
	return securecookie.GenerateRandomKey(32)
}

// derive makes an independent 32-byte key for each use of the one secret,
// so that the secret itself may be of any length or form.
func derive(secret []byte, label string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(label))
	return h.Sum(nil)
}

type shopperValue struct {
	ID uuid.UUID `json:"id"`
}

// Shopper returns the shopper the request's session names, if it has a
// valid one.
func (s *Store) Shopper(r *http.Request) (uuid.UUID, bool) {
	c, err := r.Cookie(shopperCookie)
	if err != nil {
		return uuid.Nil, false
	}
	var v shopperValue
	if err := s.codec.Decode(shopperCookie, c.Value, &v); err != nil || v.ID == uuid.Nil {
		return uuid.Nil, false
	}
	return v.ID, true
}

// SetShopper starts a session for the shopper id.
func (s *Store) SetShopper(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	value, err := s.codec.Encode(shopperCookie, shopperValue{ID: id})
	if err != nil {
		return fmt.Errorf("encode session: %w", err)
	}
	http.SetCookie(w, &http.Cookie{
		Name: shopperCookie, Value: value, Path: "/",
		MaxAge: int(MaxAge.Seconds()), HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteLaxMode,
	})
	return nil
}

// CSRFToken returns the token forms must carry, setting its cookie when the
// request has none (or one that fails to verify).
//
// It is the signed double-submit pattern: the cookie holds the token sealed
// with the server's key, the form holds it in the clear. A page of another
// site can neither read the cookie nor plant one that verifies, so it cannot
// produce a matching pair.
func (s *Store) CSRFToken(w http.ResponseWriter, r *http.Request) (string, error) {
	if token, ok := s.csrfFromCookie(r); ok {
		return token, nil
	}
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics rather than return short)
	token := base64.RawURLEncoding.EncodeToString(b)
	value, err := s.codec.Encode(csrfCookie, token)
	if err != nil {
		return "", fmt.Errorf("encode csrf cookie: %w", err)
	}
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: value, Path: "/",
		MaxAge: int(MaxAge.Seconds()), HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode,
	})
	return token, nil
}

// CheckCSRF accepts a form token that matches the request's CSRF cookie.
func (s *Store) CheckCSRF(r *http.Request, formToken string) error {
	if formToken == "" {
		return ErrCSRFMissing
	}
	token, ok := s.csrfFromCookie(r)
	if !ok || subtle.ConstantTimeCompare([]byte(token), []byte(formToken)) != 1 {
		return ErrCSRFInvalid
	}
	return nil
}

func (s *Store) csrfFromCookie(r *http.Request) (string, bool) {
	c, err := r.Cookie(csrfCookie)
	if err != nil {
		return "", false
	}
	var token string
	if err := s.codec.Decode(csrfCookie, c.Value, &token); err != nil || token == "" {
		return "", false
	}
	return token, true
}

// secure reports whether the cookie can be limited to HTTPS: the request
// came over TLS, directly or through a proxy that says so. A forged header
// can only make the cookie stricter.
func secure(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}
