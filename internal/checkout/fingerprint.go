package checkout

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// Fingerprint identifies a request for the "same key, different request"
// check: method, route and a canonical form of the JSON body, so that key
// order and whitespace do not make two equal requests differ.
func Fingerprint(method, route string, body []byte) ([]byte, error) {
	canonical, err := canonicalJSON(body)
	if err != nil {
		return nil, err
	}
	return CanonicalFingerprint(method, route, canonical), nil
}

// CanonicalFingerprint is Fingerprint of a body that is canonical already,
// byte for byte what canonicalJSON makes of it: object keys sorted, no
// insignificant whitespace, no top-level "card". A caller that encodes its
// order from a struct whose fields are in name order gets exactly that
// from encoding/json, and saves the decode and encode of canonicalJSON
// (a tenth of a replay's CPU). It must then test that both give the same
// fingerprint, or the keys stored before would no longer match.
func CanonicalFingerprint(method, route string, canonical []byte) []byte {
	h := sha256.New()
	// NUL cannot occur in a method or route, so the parts cannot run into
	// each other and collide.
	h.Write([]byte(method + "\x00" + route + "\x00"))
	h.Write(canonical)
	return h.Sum(nil)
}

// canonicalJSON re-encodes a JSON document with object keys sorted and no
// insignificant whitespace. Numbers are kept as written (json.Number), so
// 1.0 and 1 stay distinct rather than being rounded through float64.
//
// A top-level "card" string is cut to its last four characters first: the
// fingerprint is stored, and a hash of a whole card number can be reversed
// by trying the few digits an attacker does not know.
func canonicalJSON(body []byte) ([]byte, error) {
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
