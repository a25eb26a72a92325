package idem

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
)

// Fingerprint hashes the parts that identify a request, each prefixed with
// its length so that no two different lists hash alike. Pass the method,
// the route pattern (not the URL) and the normalised body (NormalizeJSON),
// or a form's fields in a fixed order.
func Fingerprint(parts ...[]byte) []byte {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return h.Sum(nil)
}

// NormalizeJSON re-encodes a JSON body with object members sorted and no
// insignificant white space, so that bodies that mean the same fingerprint
// alike. Numbers keep their text. A body that is not JSON is returned as is.
func NormalizeJSON(body []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}
