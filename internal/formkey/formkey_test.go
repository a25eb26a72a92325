package formkey_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/formkey"
)

func TestCheck(t *testing.T) {
	s := formkey.New([]byte("secret"), time.Hour)
	alice, bob := uuid.New(), uuid.New()
	key, err := s.Mint()
	if err != nil {
		t.Fatal(err)
	}
	if id, err := uuid.Parse(key); err != nil || id.Version() != 7 {
		t.Fatalf("got key %q, want a UUIDv7", key)
	}
	shown := formkey.Binding{CartID: uuid.New(), CartVersion: 3, Amount: 2400,
		Items: []catalog.Item{{SKU: "mug-espresso", Quantity: 2}}}
	sig := s.Sign(alice, key, shown)
	old, err := s.MintAt(time.Now().Add(-2 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	oldSig := s.Sign(alice, old, shown)
	edited := func(edit func(b *formkey.Binding)) formkey.Binding {
		b := shown
		b.Items = append([]catalog.Item(nil), shown.Items...)
		edit(&b)
		return b
	}
	now := time.Now()
	for _, tc := range []struct {
		name     string
		owner    uuid.UUID
		key, sig string
		b        formkey.Binding
		want     error
	}{
		{name: "fresh key of its owner", owner: alice, key: key, sig: sig, b: shown},
		{name: "another shopper's key", owner: bob, key: key, sig: sig, b: shown, want: formkey.ErrForeign},
		{name: "no signature", owner: alice, key: key, b: shown, want: formkey.ErrForeign},
		{name: "made-up key", owner: alice, key: uuid.New().String(), sig: sig, b: shown, want: formkey.ErrForeign},
		{name: "not a uuid", owner: alice, key: "k-1", sig: sig, b: shown, want: formkey.ErrForeign},
		{name: "missing", owner: alice, b: shown, want: formkey.ErrMissing},
		{name: "expired", owner: alice, key: old, sig: oldSig, b: shown, want: formkey.ErrExpired},
		{name: "quantity and amount edited consistently", owner: alice, key: key, sig: sig, want: formkey.ErrForeign,
			b: edited(func(b *formkey.Binding) { b.Items[0].Quantity, b.Amount = 1, 1200 })},
		{name: "another cart version", owner: alice, key: key, sig: sig, want: formkey.ErrForeign,
			b: edited(func(b *formkey.Binding) { b.CartVersion++ })},
		{name: "another cart", owner: alice, key: key, sig: sig, want: formkey.ErrForeign,
			b: edited(func(b *formkey.Binding) { b.CartID = uuid.New() })},
		{name: "a line added", owner: alice, key: key, sig: sig, want: formkey.ErrForeign,
			b: edited(func(b *formkey.Binding) { b.Items = append(b.Items, catalog.Item{SKU: "book-retries", Quantity: 1}) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Check(tc.owner, tc.key, tc.sig, tc.b, now); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	other := formkey.New([]byte("another secret"), time.Hour)
	if err := other.Check(alice, key, sig, shown, now); !errors.Is(err, formkey.ErrForeign) {
		t.Errorf("key checked with another secret: got %v, want ErrForeign", err)
	}
}

// TestSignatureIsUnambiguous checks that the parts of a binding cannot run
// into each other: moving a character from one SKU to the next changes the
// signature.
func TestSignatureIsUnambiguous(t *testing.T) {
	s := formkey.New([]byte("secret"), time.Hour)
	owner, cart := uuid.New(), uuid.New()
	a := formkey.Binding{CartID: cart, Items: []catalog.Item{{SKU: "ab", Quantity: 1}, {SKU: "c", Quantity: 1}}}
	b := formkey.Binding{CartID: cart, Items: []catalog.Item{{SKU: "a", Quantity: 1}, {SKU: "bc", Quantity: 1}}}
	if s.Sign(owner, "k", a) == s.Sign(owner, "k", b) {
		t.Error("two different snapshots got the same signature")
	}
}
