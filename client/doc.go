// Package client is a Go client for exactlyonce's JSON API that keeps its
// idempotency keys: one key per logical operation, saved to a KeyStore
// before the first request is sent, so a process killed mid-operation and
// started again retries with the same key instead of buying twice.
//
// It retries what is safe to retry (network errors, 409, 429, 500, 502, 503, 504)
// with exponential backoff and full jitter, waiting at least Retry-After;
// it never retries a 400, 401, 404 or 422, which no retry can change, nor a
// 409 sold-out, which only stock coming in changes (a *Problem). It
// stops retrying well before the server's published retention window ends
// (after which the same key would start a new purchase) and then
// reconciles: it asks the server what became of the key instead of
// guessing.
//
// The package uses the standard library only and imports nothing else from
// this module, so other teams can copy or import it on its own.
package client
