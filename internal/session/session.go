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
// because only forms of this site ever need it. Over HTTPS both names take
// the __Host- prefix (see cookieName).
const (
	shopperCookie = "shop_session"
	csrfCookie    = "shop_csrf"
)

// hostPrefix makes a browser accept a cookie only if it is Secure, has
// Path=/ and no Domain, so that a sibling subdomain or a plain-HTTP page
// cannot plant or overwrite it (RFC 6265bis, section 4.1.3.2).
const hostPrefix = "__Host-"

// cookieName is a cookie's name for this request: prefixed over HTTPS,
// where the cookie is Secure; plain over HTTP (local development), where a
// browser would refuse a prefixed cookie.
func cookieName(r *http.Request, name string) string {
	if secure(r) {
		return hostPrefix + name
	}
	return name
}

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

// sessionValue is what the session cookie seals: the shopper, and the
// nonce of the CSRF cookie the browser had when the session began, to which
// the session's CSRF tokens are bound.
type sessionValue struct {
	ID    uuid.UUID `json:"id"`
	Nonce string    `json:"n,omitempty"`
}

func (s *Store) session(r *http.Request) sessionValue {
	c, err := r.Cookie(cookieName(r, shopperCookie))
	if err != nil {
		return sessionValue{}
	}
	var v sessionValue
	if err := s.codec.Decode(shopperCookie, c.Value, &v); err != nil || v.ID == uuid.Nil {
		return sessionValue{}
	}
	return v
}

func (s *Store) setSession(w http.ResponseWriter, r *http.Request, v sessionValue) error {
	value, err := s.codec.Encode(shopperCookie, v)
	if err != nil {
		return fmt.Errorf("encode session: %w", err)
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(r, shopperCookie), Value: value, Path: "/",
		MaxAge: int(MaxAge.Seconds()), HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteLaxMode,
	})
	return nil
}

// Shopper returns the shopper the request's session names, if it has a
// valid one.
func (s *Store) Shopper(r *http.Request) (uuid.UUID, bool) {
	v := s.session(r)
	return v.ID, v.ID != uuid.Nil
}

// SetShopper starts a session for the shopper id. The session takes the
// nonce of the browser's CSRF cookie, so that the forms already on its
// pages (a double-clicked "Add to cart") stay valid, and from then on only
// tokens with that nonce are.
func (s *Store) SetShopper(w http.ResponseWriter, r *http.Request, id uuid.UUID) error {
	v := sessionValue{ID: id}
	if c, ok := s.csrfFromCookie(r); ok {
		v.Nonce = c.Nonce
	} else {
		v.Nonce = randomToken()
	}
	return s.setSession(w, r, v)
}

// End forgets the browser's session: both cookies are expired, so the
// browser's next change starts a new shopper. The shopper itself is
// revoked by the caller (a copy of the cookie elsewhere must stop working
// too; see handlers' sign-out).
func (s *Store) End(w http.ResponseWriter, r *http.Request) {
	for _, name := range []string{shopperCookie, csrfCookie} {
		http.SetCookie(w, &http.Cookie{Name: cookieName(r, name), Value: "", Path: "/", MaxAge: -1,
			HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteLaxMode})
	}
}

// csrfValue is what the CSRF cookie seals: the token, and a nonce that the
// session started in this browser adopts (see SetShopper).
type csrfValue struct {
	Token string `json:"t"`
	Nonce string `json:"n"`
}

// CSRFToken returns the token forms must carry, setting its cookie when the
// request has none, one that fails to verify, or one issued to another
// session.
//
// It is the signed double-submit pattern: the cookie holds the token sealed
// with the server's key, the form holds it in the clear. A page of another
// site can neither read the cookie nor plant one that verifies, so it cannot
// produce a matching pair. Once the browser has a session, the token is
// also bound to it: a pair taken from one browser (an attacker's own) and
// planted in another, which has its own session, is refused. Before there
// is a session there is nothing to bind to, and nothing to take over.
func (s *Store) CSRFToken(w http.ResponseWriter, r *http.Request) (string, error) {
	sv := s.session(r)
	if v, ok := s.csrfFromCookie(r); ok && (sv.ID == uuid.Nil || v.Nonce == sv.Nonce) {
		return v.Token, nil
	}
	nonce := sv.Nonce
	if nonce == "" {
		nonce = randomToken()
		if sv.ID != uuid.Nil {
			// A session from before tokens were bound: bind it now.
			sv.Nonce = nonce
			if err := s.setSession(w, r, sv); err != nil {
				return "", err
			}
		}
	}
	token := randomToken()
	value, err := s.codec.Encode(csrfCookie, csrfValue{Token: token, Nonce: nonce})
	if err != nil {
		return "", fmt.Errorf("encode csrf cookie: %w", err)
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(r, csrfCookie), Value: value, Path: "/",
		MaxAge: int(MaxAge.Seconds()), HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode,
	})
	return token, nil
}

// CheckCSRF accepts a form token that matches the request's CSRF cookie,
// issued to the request's session if it has one.
func (s *Store) CheckCSRF(r *http.Request, formToken string) error {
	if formToken == "" {
		return ErrCSRFMissing
	}
	sv := s.session(r)
	v, ok := s.csrfFromCookie(r)
	if !ok || (sv.ID != uuid.Nil && v.Nonce != sv.Nonce) || subtle.ConstantTimeCompare([]byte(v.Token), []byte(formToken)) != 1 {
		return ErrCSRFInvalid
	}
	return nil
}

func (s *Store) csrfFromCookie(r *http.Request) (csrfValue, bool) {
	c, err := r.Cookie(cookieName(r, csrfCookie))
	if err != nil {
		return csrfValue{}, false
	}
	var v csrfValue
	if err := s.codec.Decode(csrfCookie, c.Value, &v); err != nil || v.Token == "" {
		return csrfValue{}, false
	}
	return v, true
}

// randomToken is 32 random bytes, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics rather than return short)
	return base64.RawURLEncoding.EncodeToString(b)
}

// secure reports whether the cookie can be limited to HTTPS: the request
// came over TLS, directly or through a proxy that says so. A forged header
// can only make the cookie stricter.
func secure(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
}
