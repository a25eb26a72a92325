// Package lifecycle runs the background maintenance of the idempotency key
// lifecycle in the web binary: the completer (checkout.Completer), which
// settles keys whose attempts died or stalled, the sweeper, which deletes
// keys past the retention window, and the reconciler, which refunds charges
// that no order holds. All are safe to run on several instances at once;
// Workers runs them on a schedule and stops them together on shutdown.
package lifecycle
