// Package lifecycle runs the background side of the idempotency key
// lifecycle in the web binary: the completer (checkout.Completer), which
// settles keys whose attempts died, and the sweeper, which deletes keys past
// the retention window. Both are safe to run on several instances at once;
// Workers runs them on a schedule and stops them on shutdown.
package lifecycle
