package handlers

import (
	"fmt"
	"strings"

	"github.com/dunglas/httpsfv"

	"exactlyonce/internal/problem"
)

// MaxKeyLength is the longest Idempotency-Key accepted, as Stripe allows.
const MaxKeyLength = 255

// parseIdempotencyKey reads the Idempotency-Key header. The IETF draft makes
// it a Structured Field string ("…", quoted); the bare form most clients send
// (Stripe's convention) is accepted too. Either way the key is 1 to 255
// printable ASCII characters.
func parseIdempotencyKey(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", newAPIError(problem.MissingKey, "send an Idempotency-Key header with a unique value per operation")
	case 1:
	default:
		return "", newAPIError(problem.InvalidKey, "send exactly one Idempotency-Key header")
	}
	raw := strings.TrimSpace(values[0])
	key := raw
	if strings.HasPrefix(raw, `"`) {
		item, err := httpsfv.UnmarshalItem([]string{raw})
		if err != nil {
			return "", newAPIError(problem.InvalidKey, "the quoted Idempotency-Key is not a valid Structured Field string")
		}
		s, ok := item.Value.(string)
		if !ok || len(item.Params.Names()) > 0 {
			return "", newAPIError(problem.InvalidKey, "the Idempotency-Key must be a plain string")
		}
		key = s
	}
	if err := checkKey(key); err != nil {
		return "", newAPIError(problem.InvalidKey, err.Error())
	}
	return key, nil
}

func checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("the Idempotency-Key is empty")
	}
	if len(key) > MaxKeyLength {
		return fmt.Errorf("the Idempotency-Key is %d characters long; the limit is %d", len(key), MaxKeyLength)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return fmt.Errorf("the Idempotency-Key may hold printable ASCII characters only (byte %d is not)", i+1)
		}
	}
	return nil
}
