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
	h := sha256.New()
	// NUL cannot occur in a method or route, so the parts cannot run into
	// each other and collide.
	fmt.Fprintf(h, "%s\x00%s\x00", method, route)
	h.Write(canonical)
	return h.Sum(nil), nil
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
