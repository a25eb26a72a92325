package lab

import (
	"errors"
	"fmt"
	"time"
)

// Limits are the server's settings a scenario has to fit in. A scenario
// slows the fake provider down to make its attempts overlap, and a slow
// provider call that outlasts PROVIDER_TIMEOUT is a timeout, not the story
// the card tells: so a scenario's delay is cut to fit the server's timeout,
// and a scenario that cannot be told in what is left says so on its card
// instead of failing.
type Limits struct {
	// LockTimeout is the server's LOCK_TIMEOUT.
	LockTimeout time.Duration
	// ProviderTimeout is the server's PROVIDER_TIMEOUT, the bound on one
	// provider call.
	ProviderTimeout time.Duration
	// AuthenticationWindow is the server's AUTHENTICATION_WINDOW (zero:
	// checkout.DefaultAuthenticationWindow): how long an order waits for
	// its shopper's 3-D Secure before a retry or the completer cancels it.
	AuthenticationWindow time.Duration
}

// ErrCannotRun means the scenario cannot be run on this server's
// configuration; Runner.CannotRun says why.
var ErrCannotRun = errors.New("the scenario cannot run on this configuration")

// plan is the fake provider's behaviour for a run of sc on a server with
// limits l, or why sc cannot run there. The delay is at most half the
// provider timeout, so a delayed call ends well before it times out.
func (l Limits) plan(sc Scenario) (Behaviour, string) {
	b := sc.provider
	if b.Delay == 0 || l.ProviderTimeout <= 0 {
		return b, ""
	}
	b.Delay = min(b.Delay, l.ProviderTimeout/2)
	if b.Delay < sc.minDelay {
		return b, fmt.Sprintf("It needs the provider to take %s, half of what PROVIDER_TIMEOUT allows; this server's PROVIDER_TIMEOUT is %s, so set it to %s or more.",
			sc.minDelay, l.ProviderTimeout, 2*sc.minDelay)
	}
	return b, ""
}

// CannotRun says why the scenario named id cannot run on this server, or
// is empty when it can.
func (r *Runner) CannotRun(id string) string {
	sc, ok := ScenarioByID(id)
	if !ok {
		return ""
	}
	_, why := r.limits.plan(sc)
	return why
}

// ProviderDelay is how long the fake provider takes in a run of the
// scenario named id on this server (zero: no delay).
func (r *Runner) ProviderDelay(id string) time.Duration {
	sc, _ := ScenarioByID(id)
	b, _ := r.limits.plan(sc)
	return b.Delay
}
