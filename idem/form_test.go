package idem_test

import (
	"errors"
	"testing"
	"time"

	"exactlyonce/idem"
)

func TestFormKeys(t *testing.T) {
	f := idem.NewForms([]byte("secret"), time.Hour)
	k := f.Mint("alice", "v1")
	if err := idem.CheckKey(k.Key); err != nil {
		t.Fatalf("minted key %q is not a valid key: %v", k.Key, err)
	}
	for _, tc := range []struct {
		name             string
		visitor, version string
		key              idem.FormKey
		want             error
	}{
		{"the visitor and version it was minted for", "alice", "v1", k, nil},
		{"another visitor", "bob", "v1", k, idem.ErrFormKeyForeign},
		{"another version of the form", "alice", "v2", k, idem.ErrFormKeyForeign},
		{"an edited key", "alice", "v1", idem.FormKey{Key: k.Key + "x", Sig: k.Sig}, idem.ErrFormKeyForeign},
		{"no key", "alice", "v1", idem.FormKey{}, idem.ErrFormKeyMissing},
		{"another server's key", "alice", "v1", idem.NewForms([]byte("other"), time.Hour).Mint("alice", "v1"), idem.ErrFormKeyForeign},
		{"an old key", "alice", "v1", f.MintAt(time.Now().Add(-2*time.Hour), "alice", "v1"), idem.ErrFormKeyExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := f.Verify(tc.visitor, tc.version, tc.key); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	for raw, want := range map[string]string{`k`: "k", ` "a\"b" `: `a"b`, `"a\\b"`: `a\b`} {
		if got, err := idem.ParseKey(raw); err != nil || got != want {
			t.Errorf("ParseKey(%q): got %q, %v, want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{``, `""`, `"a`, `"a\x"`, `"a";p=1`, "clé", `"` + string(make([]byte, 256)) + `"`} {
		if _, err := idem.ParseKey(raw); !errors.Is(err, idem.ErrBadKey) {
			t.Errorf("ParseKey(%q): got %v, want ErrBadKey", raw, err)
		}
	}
}
