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
func canonicalJSON(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return json.Marshal(v)
}
