package idem

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// The names of the hidden fields HiddenFields renders.
const (
	KeyField = "idempotency_key"
	SigField = "idempotency_sig"
)

// Why a form's key was refused.
var (
	ErrFormKeyMissing = errors.New("the form carries no key")
	// ErrFormKeyForeign means the key was not minted by this server for
	// this visitor and this version of the form: malformed, signed for
	// someone else or for what another form showed, or not signed at all.
	ErrFormKeyForeign = errors.New("the form key was not minted for this visitor and form")
	// ErrFormKeyExpired means the key is older than the Forms' TTL: its
	// answer may have been swept, so it must not start a new operation.
	ErrFormKeyExpired = errors.New("the form key has expired")
)

// futureSkew is how far ahead of this server's clock a key may claim to be
// minted: another instance's clock may run a little fast.
const futureSkew = time.Minute

// Forms mints the keys HTML forms carry and checks them when a form comes
// back. A key is minted when the form is rendered, so a double click, a
// reload and a back-button resubmit all send the same key; its signature
// binds it to the visitor and to a version of what the form showed (a cart
// version, a list of slots), so an edited or foreign form is refused.
type Forms struct {
	mac []byte
	ttl time.Duration
}

// NewForms returns Forms whose keys live for ttl (keep it shorter than the
// sweeper's Keep), signed with a key derived from secret.
func NewForms(secret []byte, ttl time.Duration) *Forms {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("idem/forms/v1"))
	return &Forms{mac: h.Sum(nil), ttl: ttl}
}

// FormKey is what a form carries: the key and its signature.
type FormKey struct {
	Key string
	Sig string
}

// Mint returns a new key for visitor and the version of the form shown.
func (f *Forms) Mint(visitor, version string) FormKey {
	return f.MintAt(time.Now(), visitor, version)
}

// MintAt mints as if at t; tests use it to make an expired key.
func (f *Forms) MintAt(t time.Time, visitor, version string) FormKey {
	key := strconv.FormatInt(t.UnixMilli(), 36) + "-" + strings.ToLower(rand.Text())
	return FormKey{Key: key, Sig: f.sign(visitor, version, key)}
}

// Verify accepts k if this server minted it for visitor and version less
// than the TTL ago.
func (f *Forms) Verify(visitor, version string, k FormKey) error {
	if k.Key == "" {
		return ErrFormKeyMissing
	}
	if !hmac.Equal([]byte(k.Sig), []byte(f.sign(visitor, version, k.Key))) {
		return ErrFormKeyForeign
	}
	ms, _, ok := strings.Cut(k.Key, "-")
	n, err := strconv.ParseInt(ms, 36, 64)
	if !ok || err != nil {
		return ErrFormKeyForeign
	}
	minted := time.UnixMilli(n)
	if time.Since(minted) > f.ttl || time.Until(minted) > futureSkew {
		return ErrFormKeyExpired
	}
	return nil
}

// FormKeyOf reads the hidden fields of a submitted form.
func FormKeyOf(c echo.Context) FormKey {
	return FormKey{Key: c.FormValue(KeyField), Sig: c.FormValue(SigField)}
}

func (f *Forms) sign(visitor, version, key string) string {
	h := hmac.New(sha256.New, f.mac)
	// Each part is prefixed with its length, so no two triples sign alike.
	for _, s := range []string{visitor, version, key} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}
