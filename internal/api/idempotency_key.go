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
// printable ASCII characters.
func parseIdempotencyKey(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", web.Fail(problem.MissingKey, "send an Idempotency-Key header with a unique value per operation")
	case 1:
	default:
		return "", web.Fail(problem.InvalidKey, "send exactly one Idempotency-Key header")
	}
	key, err := idem.ParseKey(values[0])
	if err != nil {
		return "", web.Fail(problem.InvalidKey, idem.KeyProblem(err))
	}
	return key, nil
}
