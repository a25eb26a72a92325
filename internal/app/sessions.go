package app

import (
	"time"

	"exactlyonce/internal/formkey"
	"exactlyonce/internal/session"
)

// maxCheckoutFormAge caps how long a rendered checkout form may be paid
// with; a form older than that is refused and a new one offered.
const maxCheckoutFormAge = time.Hour

// browserSessions builds the browser shop's cookie store and the signer of
// its checkout form keys from SESSION_SECRET, or from a random secret (with
// a warning) when none is set; it returns the secret and the forms' TTL for
// the kit's forms (the pickup form) too.
func browserSessions(cfg Config) (*session.Store, *formkey.Signer, []byte, time.Duration) {
	secret := []byte(cfg.SessionSecret)
	if len(secret) == 0 {
		cfg.Log.Warn("SESSION_SECRET is not set: using a random one, so shoppers' sessions and open checkout forms will not survive a restart")
		secret = session.RandomSecret()
	}
	ttl := checkoutFormTTL(cfg.KeyRetention)
	return session.New(secret), formkey.New(secret, ttl), secret, ttl
}

// checkoutFormTTL is how long a checkout form's key is accepted. A form may
// only be sent while the answer its key stored is sure to still exist:
// the key is created when the form is first sent, at or after minting, and
// kept for the retention, so a TTL within the retention never meets a
// swept key — which would otherwise place the order a second time.
func checkoutFormTTL(retention time.Duration) time.Duration {
	return min(maxCheckoutFormAge, retention/2)
}
