package api

import (
	"exactlyonce/idem"
	"exactlyonce/internal/problem"
	"exactlyonce/internal/web"
)

// MaxKeyLength is the longest Idempotency-Key accepted, as Stripe allows.
const MaxKeyLength = idem.MaxKeyLength

// parseIdempotencyKey reads the Idempotency-Key header. The IETF draft makes
// it a Structured Field string ("…", quoted); the bare form most clients send
// (Stripe's convention) is accepted too. Either way the key is 1 to 255
// printable ASCII characters. Its refusals are the kit's errors, answered
// from the kit's part of the error table.
func parseIdempotencyKey(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", idem.ErrMissingKey
	case 1:
	default:
		return "", web.Fail(problem.InvalidKey, "send exactly one Idempotency-Key header")
	}
	return idem.ParseKey(values[0])
}
