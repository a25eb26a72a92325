package checkout

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"exactlyonce/idem"
)

// Fingerprint identifies an order request for the "same key, different
// request" check, by the kit's one rule (idem.Fingerprint): the method, the
// route and the body in canonical form. The caller passes the body canonical
// already (object members sorted, no insignificant whitespace, as
// idem.NormalizeJSON makes it, or as encoding/json writes a struct whose
// fields are in name order), and with a card cut to its last four digits:
// the fingerprint is stored, and a hash of a whole card number can be
// reversed by trying the few digits an attacker does not know.
func Fingerprint(method, route string, canonical []byte) []byte {
	return idem.Fingerprint([]byte(method), []byte(route), canonical)
}

// LegacyFingerprint is what the shop's own rule, before it took the kit's,
// made of a request: SHA-256 of method, route and the body re-encoded with
// its members sorted and a top-level "card" cut to its last four
// characters. Keys claimed before the change (2026-12) are stored under it,
// so every route passes it as an accepted fingerprint (Attempt.
// AcceptFingerprints): a retry of such a key still matches, byte for byte.
// Once KEY_RETENTION has passed since the upgrade no key holds it, and it
// can go.
func LegacyFingerprint(method, route string, body []byte) ([]byte, error) {
	canonical, err := legacyCanonical(body)
	if err != nil {
		return nil, err
	}
	return legacyHash(method, route, canonical), nil
}

// legacyHash is the legacy rule's hash of a canonical body. NUL cannot occur
// in a method or route, so the parts cannot run into each other.
func legacyHash(method, route string, canonical []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method + "\x00" + route + "\x00"))
	h.Write(canonical)
	return h.Sum(nil)
}

// legacyCanonical is the legacy rule's canonical body: members sorted, no
// insignificant whitespace, numbers as written, a top-level "card" cut to
// its last four characters.
func legacyCanonical(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if obj, ok := v.(map[string]any); ok {
		if card, ok := obj["card"].(string); ok {
			obj["card"] = card[max(0, len(card)-4):]
		}
	}
	return json.Marshal(v)
}

// LegacyCanonicalFingerprint is LegacyFingerprint of a body canonical
// already, for a route that encodes its body canonical by construction.
func LegacyCanonicalFingerprint(method, route string, canonical []byte) []byte {
	return legacyHash(method, route, canonical)
}
