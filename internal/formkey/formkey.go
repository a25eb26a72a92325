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
	"encoding/binary"
	"time"

	"github.com/google/uuid"

	"exactlyonce/idem"
	"exactlyonce/internal/catalog"
)

// Why a key was refused: the kit's form-key errors, under the names the
// checkout uses.
var (
	ErrMissing = idem.ErrFormKeyMissing
	// ErrForeign means the key was not minted by this server for this
	// shopper and this form: malformed, signed for someone else or for
	// other lines or another amount, or not signed at all.
	ErrForeign = idem.ErrFormKeyForeign
	ErrExpired = idem.ErrFormKeyExpired
)

// Signer mints and checks keys with the kit's form keys (idem.Forms): the
// shopper is the visitor and the Binding is the version of the form. It is
// safe for concurrent use.
type Signer struct{ forms *idem.Forms }

// New returns a Signer whose keys live for ttl. The secret is the one the
// session cookies are derived from; the kit derives its own key from it.
func New(secret []byte, ttl time.Duration) *Signer {
	return &Signer{forms: idem.NewForms(secret, ttl)}
}

// TTL is how long a minted key is accepted.
func (s *Signer) TTL() time.Duration { return s.forms.TTL() }

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

// version encodes b as the form version the kit signs. Every
// variable-length part is prefixed with its length, so that no two
// different forms encode to the same bytes.
func (b Binding) version() string {
	out := append([]byte(nil), b.CartID[:]...)
	out = binary.BigEndian.AppendUint64(out, uint64(b.CartVersion))
	out = binary.BigEndian.AppendUint64(out, uint64(b.Amount))
	out = binary.BigEndian.AppendUint64(out, uint64(len(b.Items)))
	for _, it := range b.Items {
		out = binary.BigEndian.AppendUint64(out, uint64(len(it.SKU)))
		out = append(out, it.SKU...)
		out = binary.BigEndian.AppendUint64(out, uint64(it.Quantity))
	}
	return string(out)
}

// Mint returns a new key. Keys are kept with a cart version and signed
// anew for each form that shows them (Sign).
func (s *Signer) Mint() (string, error) {
	return idem.NewKey(time.Now()), nil
}

// MintAt mints a key as if at t. The application mints with Mint; tests use
// MintAt to make a key that has already expired.
func (s *Signer) MintAt(t time.Time) (string, error) {
	return idem.NewKey(t), nil
}

// Sign returns the signature binding key to owner and to what the form shows.
func (s *Signer) Sign(owner uuid.UUID, key string, b Binding) string {
	return s.forms.Sign(owner.String(), b.version(), key)
}

// Check accepts key if it was minted less than the TTL ago and signed for
// owner and exactly this binding.
func (s *Signer) Check(owner uuid.UUID, key, sig string, b Binding, now time.Time) error {
	version := b.version()
	return s.forms.VerifyAt(now, owner.String(), version, idem.FormKey{Key: key, Sig: sig})
}
