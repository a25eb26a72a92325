package formkey_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/formkey"
)

// FuzzCheck feeds the verifier keys, signatures and form contents it never
// minted. Invariants: no panic; every refusal is one of the package's
// errors; the same input gets the same answer; a key is accepted only with
// the signature this signer makes for exactly that form; and a form this
// signer signed is accepted unless its key is not one it could have minted.
func FuzzCheck(f *testing.F) {
	f.Add("", "", int64(1), int64(1200), "mug-espresso", 1)
	f.Add("0190d5f0-0000-7000-8000-000000000000", "sig", int64(0), int64(0), "", 0)
	f.Add("not-a-uuid", "AAAAAAAAAAAAAAAAAAAAAA", int64(-1), int64(-1), "\x00", -1)
	f.Add("0190D5F0-0000-7000-8000-000000000000", "", int64(9223372036854775807), int64(-9223372036854775808), "a\xffb", 99)
	f.Add("{0190d5f0-0000-7000-8000-000000000000}", "=", int64(2), int64(2400), "mug-espresso", 2)
	f.Add("urn:uuid:0190d5f0-0000-4000-8000-000000000000", "x", int64(3), int64(1), "book-retries", 100)

	s := formkey.New([]byte("fuzz secret"), time.Hour)
	owner := uuid.MustParse("0190d5f0-1111-7000-8000-000000000001")
	cart := uuid.MustParse("0190d5f0-2222-7000-8000-000000000002")
	now := time.UnixMilli(1_750_000_000_000)
	f.Fuzz(func(t *testing.T, key, sig string, version, amount int64, sku string, quantity int) {
		b := formkey.Binding{CartID: cart, CartVersion: version, Amount: amount,
			Items: []catalog.Item{{SKU: sku, Quantity: quantity}}}
		err := s.Check(owner, key, sig, b, now)
		if err != nil && !errors.Is(err, formkey.ErrMissing) && !errors.Is(err, formkey.ErrForeign) && !errors.Is(err, formkey.ErrExpired) {
			t.Fatalf("got %v, want nil or one of the package's errors", err)
		}
		if again := s.Check(owner, key, sig, b, now); !errors.Is(again, err) {
			t.Fatalf("the same input got %v, then %v", err, again)
		}
		signed := s.Sign(owner, key, b)
		if err == nil && sig != signed {
			t.Fatalf("accepted signature %q, want only %q", sig, signed)
		}
		// The same form, signed by this signer: refused only for its key.
		err = s.Check(owner, key, signed, b, now)
		if errors.Is(err, formkey.ErrForeign) {
			if id, perr := uuid.Parse(key); perr == nil && id.Version() == 7 && id.String() == key {
				t.Fatalf("a well-formed key with its own signature was refused as foreign")
			}
		}
		// Any other amount breaks the signature.
		other := b
		other.Amount++
		if err == nil && s.Check(owner, key, signed, other, now) == nil {
			t.Fatal("a form with another amount passed with the original signature")
		}
	})
}
