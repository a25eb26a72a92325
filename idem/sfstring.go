package idem

import (
	"errors"
	"fmt"
	"strings"
)

// MaxKeyLength is the longest key accepted, as Stripe allows.
const MaxKeyLength = 255

// ErrBadKey is wrapped by every error ParseKey returns; the wrapping error's
// text says what is wrong, in words a client developer can act on.
var ErrBadKey = errors.New("invalid idempotency key")

func badKey(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrBadKey)
}

// ParseKey reads an Idempotency-Key header value. The IETF draft makes it a
// Structured Field string (RFC 8941 §3.3.3: "…" with \" and \\ as the only
// escapes); the bare form most clients send (Stripe's convention) is
// accepted too. Either way the key is 1 to 255 printable ASCII characters.
func ParseKey(v string) (string, error) {
	key := strings.TrimSpace(v)
	if strings.HasPrefix(key, `"`) {
		var err error
		if key, err = unquote(key); err != nil {
			return "", err
		}
	}
	if err := CheckKey(key); err != nil {
		return "", err
	}
	return key, nil
}

// CheckKey accepts a key of 1 to 255 printable ASCII characters, however it
// arrived (a header, a form field, a URL).
func CheckKey(key string) error {
	if key == "" {
		return badKey("the Idempotency-Key is empty")
	}
	if len(key) > MaxKeyLength {
		return badKey("the Idempotency-Key is %d characters long; the limit is %d", len(key), MaxKeyLength)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return badKey("the Idempotency-Key may hold printable ASCII characters only (byte %d is not)", i+1)
		}
	}
	return nil
}

// keyProblem is the part of a ParseKey or CheckKey error to show a client.
func keyProblem(err error) string {
	return strings.TrimSuffix(err.Error(), ": "+ErrBadKey.Error())
}

// unquote parses a Structured Field string that must be the whole value.
func unquote(v string) (string, error) {
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\':
			i++
			if i == len(v) || (v[i] != '"' && v[i] != '\\') {
				return "", badKey("the quoted Idempotency-Key is not a valid Structured Field string")
			}
			b.WriteByte(v[i])
		case c == '"':
			if i != len(v)-1 {
				return "", badKey("the Idempotency-Key must be a plain string")
			}
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", badKey("the quoted Idempotency-Key is not a valid Structured Field string")
		default:
			b.WriteByte(c)
		}
	}
	return "", badKey("the quoted Idempotency-Key is not a valid Structured Field string")
}
