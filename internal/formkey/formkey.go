// Package formkey mints the idempotency keys that checkout forms carry and
// checks them when a form comes back.
//
// A key is a UUIDv7, whose first 48 bits are the millisecond it was minted,
// and a signature binds it to the shopper it was minted for and to what the
// form shows: the cart version, its lines and the amount. So the server
// refuses a key it never minted, one minted for another shopper, a form
// whose lines or amount were edited, and a key too old to be trusted: a stored
// answer is swept some time after its key was used, and a form resubmitted
// after that must not be taken for a new order.
package formkey

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
)

// Why a key was refused.
var (
	ErrMissing = errors.New("the form carries no key")
	// ErrForeign means the key was not minted by this server for this
	// shopper and this form: malformed, signed for someone else or for
	// other lines or another amount, or not signed at all.
	ErrForeign = errors.New("the key was not minted for this shopper")
	ErrExpired = errors.New("the key has expired")
)

// futureSkew is how far ahead of this server's clock a key may claim to be
// minted: another instance's clock may run a little fast.
const futureSkew = time.Minute

// Signer mints and checks keys. It is safe for concurrent use.
type Signer struct {
	mac []byte
	ttl time.Duration
}

// New returns a Signer whose keys live for ttl. The secret is the one the
// session cookies are derived from; the Signer derives its own key from it.
func New(secret []byte, ttl time.Duration) *Signer {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("formkey/v1"))
	return &Signer{mac: h.Sum(nil), ttl: ttl}
}

// TTL is how long a minted key is accepted.
func (s *Signer) TTL() time.Duration { return s.ttl }

// Binding is what a form's signature covers besides the shopper and the
// key: the cart version the form was rendered for, the snapshot of its lines
// in the order shown, and the amount shown. A form whose lines or amount
// were edited, even consistently with each other, fails the check.
type Binding struct {
	CartID      uuid.UUID
	CartVersion int64
	Items       []catalog.Item
	Amount      int64
}

// Mint returns a new key. Keys are kept with a cart version and signed
// anew for each form that shows them (Sign).
func (s *Signer) Mint() (string, error) {
	return s.MintAt(time.Now())
}

// MintAt mints a key as if at t. The application mints with Mint; tests use
// MintAt to make a key that has already expired.
func (s *Signer) MintAt(t time.Time) (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("mint key: %w", err)
	}
	// Overwrite the 48-bit timestamp; the version, variant and random bits
	// stay as NewV7 made them.
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(id[0:6], ms[2:8])
	return id.String(), nil
}

// Sign returns the signature binding key to owner and to what the form shows.
func (s *Signer) Sign(owner uuid.UUID, key string, b Binding) string {
	h := hmac.New(sha256.New, s.mac)
	h.Write(owner[:])
	// Every variable-length part is prefixed with its length, so that no
	// two different forms encode to the same bytes.
	writeString(h, key)
	h.Write(b.CartID[:])
	writeInt(h, b.CartVersion)
	writeInt(h, b.Amount)
	writeInt(h, int64(len(b.Items)))
	for _, it := range b.Items {
		writeString(h, it.SKU)
		writeInt(h, int64(it.Quantity))
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

func writeInt(w hash.Hash, n int64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	w.Write(b[:])
}

func writeString(w hash.Hash, s string) {
	writeInt(w, int64(len(s)))
	w.Write([]byte(s))
}

// Check accepts key if it was minted less than the TTL ago and signed for
// owner and exactly this binding.
func (s *Signer) Check(owner uuid.UUID, key, sig string, b Binding, now time.Time) error {
	if key == "" {
		return ErrMissing
	}
	id, err := uuid.Parse(key)
	if err != nil || id.Version() != 7 || id.String() != key {
		return ErrForeign
	}
	if !hmac.Equal([]byte(sig), []byte(s.Sign(owner, key, b))) {
		return ErrForeign
	}
	minted := time.UnixMilli(int64(binary.BigEndian.Uint64(id[:8]) >> 16))
	if now.Sub(minted) > s.ttl || minted.Sub(now) > futureSkew {
		return ErrExpired
	}
	return nil
}
