package app

import (
	"exactlyonce/internal/payment"
)

// paymentClient returns the client the engine and the background workers
// pay through: Stripe's, at StripeAPIBase (Stripe itself, or the fake
// Stripe that `make run`, the tests and the bench start as a process, or a
// server, of its own). The shop reaches the provider only over HTTP. The
// client writes deployment, this database's marker, on every intent it
// creates.
func paymentClient(cfg Config, deployment string) *payment.Client {
	return payment.NewClient(payment.Config{SecretKey: cfg.StripeSecretKey, APIBase: cfg.StripeAPIBase,
		Timeout: cfg.ProviderTimeout, MaxNetworkRetries: payment.NetworkRetries, Deployment: deployment,
		Tracing: cfg.Tracing.Provider})
}
