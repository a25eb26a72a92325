// Package payment is the shop's client of Stripe's PaymentIntents, on
// Stripe's own Go SDK (stripe-go), so that the same code charges through
// Stripe's test mode with a secret key and through the fake
// (internal/fakestripe) in every test: only the backend URL differs. It
// sorts every way a call can end into the few outcomes a caller must treat
// differently: an intent; a decline, which is definite (no money moved); an
// unavailable provider, after which the outcome may be unknown and the
// caller asks again with the same idempotency key or settles the intent by
// its id; a canceled intent (ErrCanceled), a definite "no charge"; and a
// provider error, which means a bug on our side. It also lists intents and
// refunds them, for the reconciler and the webhook handler.
package payment

import (
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v85"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/tracing"
)

// Config is what NewClient needs.
type Config struct {
	// SecretKey is Stripe's secret key (sk_test_… in test mode), or the
	// fake's.
	SecretKey string
	// APIBase is the API's base URL, with no path (the SDK sends every
	// path from /v1 on it): https://api.stripe.com for Stripe, the fake's
	// server (such as http://127.0.0.1:8081) otherwise.
	APIBase string
	// Timeout bounds each HTTP request (PROVIDER_TIMEOUT); none if zero.
	Timeout time.Duration
	// MaxNetworkRetries is how often the SDK itself sends a request again
	// after a lost answer, a 409 or a 5xx, with the same idempotency key
	// and honouring Stripe-Should-Retry. The shop sets 0 (see
	// NetworkRetries): its engine retries by itself.
	MaxNetworkRetries int64
	// Deployment is this deployment's marker (the database's, see
	// database.DB.DeploymentID), written on every PaymentIntent the client
	// creates; empty writes none (tools and tests that make intents the
	// shop must take for someone else's).
	Deployment string
	// Tracing, when set, makes each HTTP request a client span of the
	// caller's trace and sends its traceparent along, so that the fake
	// Stripe's server span joins the trace (Stripe ignores the header).
	Tracing trace.TracerProvider
}

// NetworkRetries is the shop's setting of the SDK's MaxNetworkRetries: none.
// The SDK's retries would be safe (the same idempotency key), but it waits
// between them with time.Sleep, which a cancelled context does not cut
// short, and it would multiply with the engine's own retries
// (checkout.Config.ProviderRetries): those wait on the context, so the
// lease's fence and a shutdown stop them at once, they are counted in the
// provider metrics, and they honour Stripe-Should-Retry through
// ProviderError.Transient. One retry loop, the engine's, inside the lease.
const NetworkRetries = 0

// Client calls Stripe's API (or the fake's) through the SDK. It is safe for
// concurrent use and holds a pool of keep-alive connections, so one Client
// should serve the whole process.
type Client struct {
	sc         *stripe.Client
	deployment string
}

// NewClient returns a client configured by cfg.
func NewClient(cfg Config) *Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	// The default keeps 2 idle connections per host; under a burst of
	// concurrent checkouts every other call would open a new connection.
	transport.MaxIdleConns = 100
	transport.MaxIdleConnsPerHost = 64
	transport.IdleConnTimeout = 90 * time.Second
	var rt http.RoundTripper = transport
	if cfg.Tracing != nil {
		rt = tracing.Transport(transport, cfg.Tracing)
	}
	httpClient := &http.Client{
		Transport: rt,
		Timeout:   cfg.Timeout,
		// The API never redirects; following one would resend a charge to
		// wherever it pointed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	retries := cfg.MaxNetworkRetries
	telemetry := false
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:               stripe.String(cfg.APIBase),
		HTTPClient:        httpClient,
		MaxNetworkRetries: &retries,
		EnableTelemetry:   &telemetry,
		// The SDK logs every request at info level, and an error's whole
		// body at error level; the shop logs what it decides instead.
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	backends := &stripe.Backends{API: backend, Connect: backend, Uploads: backend, MeterEvents: backend}
	return &Client{sc: stripe.NewClient(cfg.SecretKey, stripe.WithBackends(backends)), deployment: cfg.Deployment}
}
