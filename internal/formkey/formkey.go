// Package formkey mints the idempotency keys that checkout forms carry and
// checks them when a form comes back.
//
// A key is a UUIDv7, whose first 48 bits are the millisecond it was minted,
// and a signature binds it to the shopper it was minted for. So the server
// stores nothing when it renders a form, yet refuses a key it never minted,
// one minted for another shopper, and one too old to be trusted: a stored
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
	"time"

	"github.com/google/uuid"
)

// Why a key was refused.
var (
	ErrMissing = errors.New("the form carries no key")
	// ErrForeign means the key was not minted by this server for this
	// shopper: malformed, signed for someone else, or not signed at all.
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

// Mint returns a new key for owner and its signature.
func (s *Signer) Mint(owner uuid.UUID) (key, sig string, err error) {
	return s.MintAt(owner, time.Now())
}

// MintAt mints a key as if at t. The application mints with Mint; tests use
// MintAt to make a key that has already expired.
func (s *Signer) MintAt(owner uuid.UUID, t time.Time) (key, sig string, err error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", "", fmt.Errorf("mint key: %w", err)
	}
	// Overwrite the 48-bit timestamp; the version, variant and random bits
	// stay as NewV7 made them.
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(id[0:6], ms[2:8])
	key = id.String()
	return key, s.Sign(owner, key), nil
}

// Sign returns the signature binding key to owner.
func (s *Signer) Sign(owner uuid.UUID, key string) string {
	h := hmac.New(sha256.New, s.mac)
	h.Write(owner[:])
	h.Write([]byte(key))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// Check accepts key if it was minted for owner less than the TTL ago.
func (s *Signer) Check(owner uuid.UUID, key, sig string, now time.Time) error {
	if key == "" {
		return ErrMissing
	}
	id, err := uuid.Parse(key)
	if err != nil || id.Version() != 7 || id.String() != key {
		return ErrForeign
	}
	if !hmac.Equal([]byte(sig), []byte(s.Sign(owner, key))) {
		return ErrForeign
	}
	minted := time.UnixMilli(int64(binary.BigEndian.Uint64(id[:8]) >> 16))
	if now.Sub(minted) > s.ttl || minted.Sub(now) > futureSkew {
		return ErrExpired
	}
	return nil
}
