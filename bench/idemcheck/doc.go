// Package idemcheck checks that an HTTP API implements idempotency keys the
// way the IETF Idempotency-Key draft, Stripe, or this shop's contract says.
//
// It talks to the API only through HTTP, as a client would, and counts
// executions from the responses (distinct resource ids read from a JSON
// pointer or the Location header), never from the server's database, so it
// runs against any API, not just this one. bench/cmd/idemcheck wires it to flags;
// the package is importable so other teams can run it from their own tests.
package idemcheck
