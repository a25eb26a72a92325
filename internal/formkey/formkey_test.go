package formkey_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"exactlyonce/internal/formkey"
)

func TestCheck(t *testing.T) {
	s := formkey.New([]byte("secret"), time.Hour)
	alice, bob := uuid.New(), uuid.New()
	key, sig, err := s.Mint(alice)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := uuid.Parse(key); err != nil || id.Version() != 7 {
		t.Fatalf("got key %q, want a UUIDv7", key)
	}
	old, oldSig, err := s.MintAt(alice, time.Now().Add(-2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, tc := range []struct {
		name     string
		owner    uuid.UUID
		key, sig string
		want     error
	}{
		{name: "fresh key of its owner", owner: alice, key: key, sig: sig},
		{name: "another shopper's key", owner: bob, key: key, sig: sig, want: formkey.ErrForeign},
		{name: "no signature", owner: alice, key: key, want: formkey.ErrForeign},
		{name: "made-up key", owner: alice, key: uuid.New().String(), sig: sig, want: formkey.ErrForeign},
		{name: "not a uuid", owner: alice, key: "k-1", sig: sig, want: formkey.ErrForeign},
		{name: "missing", owner: alice, want: formkey.ErrMissing},
		{name: "expired", owner: alice, key: old, sig: oldSig, want: formkey.ErrExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Check(tc.owner, tc.key, tc.sig, now); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	other := formkey.New([]byte("another secret"), time.Hour)
	if err := other.Check(alice, key, sig, now); !errors.Is(err, formkey.ErrForeign) {
		t.Errorf("key checked with another secret: got %v, want ErrForeign", err)
	}
}
