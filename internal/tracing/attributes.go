package tracing

import (
	"crypto/sha256"
	"encoding/hex"

	"go.opentelemetry.io/otel/attribute"

	"exactlyonce/internal/logging"
)

// The attributes that tie a span to an idempotency key. A span carries the
// key's reference, never the key: spans leave the process for a collector,
// and a key is the client's and may carry meaning, so, as in the logs
// (logging.Key), a span shows a short prefix of it and no more.
const (
	// AttrKeyRef is the key's reference (KeyRef): the same for every
	// attempt of the key and the completer's, and what the admin
	// listener's /traces?key= looks traces up by.
	AttrKeyRef = attribute.Key("exactlyonce.key.ref")
	// AttrKey is the key redacted to a short prefix, for people.
	AttrKey = attribute.Key("exactlyonce.key")
	// AttrCustomer is the key's customer (its scope).
	AttrCustomer = attribute.Key("exactlyonce.customer_id")
)

// Attributes the shop's spans share.
const (
	// AttrOutcome is what a step came to: a claim's, a finish's, a
	// completer's or a reconciler's outcome, as their metrics label it.
	AttrOutcome = attribute.Key("exactlyonce.outcome")
	// AttrPaymentIntent is the PaymentIntent a step is about.
	AttrPaymentIntent = attribute.Key("exactlyonce.payment_intent")
)

// KeyRef names the key of a customer (a scope) without revealing it: the
// first 16 bytes of SHA-256(scope, NUL, key), in hex. Whoever knows the
// customer and the key can compute it (the key inspector, an operator
// with both in hand); nobody can read the key back from it.
func KeyRef(scope, key string) string {
	sum := sha256.Sum256([]byte(scope + "\x00" + key))
	return hex.EncodeToString(sum[:16])
}

// KeyAttributes are the attributes of a span about the key of scope (a
// customer's id): its reference, the key redacted as the logs redact it,
// and the customer.
func KeyAttributes(scope, key string) []attribute.KeyValue {
	return []attribute.KeyValue{
		AttrKeyRef.String(KeyRef(scope, key)), AttrKey.String(logging.RedactKey(key)), AttrCustomer.String(scope),
	}
}
