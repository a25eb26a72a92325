package handlers

import (
	"time"

	"exactlyonce/internal/checkout"
	"exactlyonce/internal/web"
)

// finishBudget covers what a request does after its provider call: the
// finish statement (the engine bounds it at 10 s by default) and the
// answer. It is generous on purpose: cutting a request that is merely slow
// costs a retry, and a write timeout is a backstop, not a deadline.
const finishBudget = 15 * time.Second

// LongestRequest is how long the slowest legitimate request may run once
// its body is read, for a provider timeout: a new order may wait
// web.DeclineWait for a decline token, wait up to checkout.MaxWait for the
// attempt it joined (a browser submit, or an API order sent with Prefer:
// wait), then run its own up to checkout.ClaimTimeout before the claim, the
// provider call, and the finish. The server's write
// timeout must be above it, or a slow but healthy payment is cut off and
// the shopper sees an error for an order that went through.
func LongestRequest(providerTimeout time.Duration) time.Duration {
	return web.DeclineWait + checkout.MaxWait + checkout.ClaimTimeout + providerTimeout + finishBudget
}
