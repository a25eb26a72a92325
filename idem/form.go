package idem

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"
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
	key := NewKey(t)
	return FormKey{Key: key, Sig: f.Sign(visitor, version, key)}
}

// TTL is how long a minted key is accepted.
func (f *Forms) TTL() time.Duration { return f.ttl }

// Verify accepts k if this server minted it for visitor and version less
// than the TTL ago.
func (f *Forms) Verify(visitor, version string, k FormKey) error {
	return f.VerifyAt(time.Now(), visitor, version, k)
}

// VerifyAt is Verify as if at now.
func (f *Forms) VerifyAt(now time.Time, visitor, version string, k FormKey) error {
	if k.Key == "" {
		return ErrFormKeyMissing
	}
	minted, ok := keyTime(k.Key)
	if !ok || !hmac.Equal([]byte(k.Sig), []byte(f.Sign(visitor, version, k.Key))) {
		return ErrFormKeyForeign
	}
	if now.Sub(minted) > f.ttl || minted.Sub(now) > futureSkew {
		return ErrFormKeyExpired
	}
	return nil
}

// Sign returns the signature binding key to visitor and version. Callers
// that keep a key apart from its signature (a key kept with a cart version
// and signed for each render) use it with NewKey.
func (f *Forms) Sign(visitor, version, key string) string {
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

// NewKey returns a UUIDv7 minted at t, in canonical (lower-case) form: its
// first 48 bits are t's millisecond, which is how Verify tells its age.
func NewKey(t time.Time) string {
	var u [16]byte
	rand.Read(u[6:])
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(u[0:6], ms[2:8])
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	x := hex.EncodeToString(u[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// keyTime returns the minting time of a canonical UUIDv7 key.
func keyTime(key string) (time.Time, bool) {
	if len(key) != 36 || key[14] != '7' {
		return time.Time{}, false
	}
	var u []byte
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return time.Time{}, false
			}
		case '0' <= c && c <= '9' || 'a' <= c && c <= 'f':
			u = append(u, c)
		default:
			return time.Time{}, false
		}
	}
	b, _ := hex.DecodeString(string(u))
	var ms [8]byte
	copy(ms[2:8], b[0:6])
	return time.UnixMilli(int64(binary.BigEndian.Uint64(ms[:]))), true
}
