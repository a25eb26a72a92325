package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestShortSessionSecretRefusesToStart(t *testing.T) {
	validEnv(t)
	t.Setenv("SESSION_SECRET", "too-short")
	_, err := Load()
	if err == nil || !strings.Contains(err.Error(), "SESSION_SECRET") || !strings.Contains(err.Error(), "at least 32") {
		t.Errorf("got %v, want an error naming SESSION_SECRET and its minimum", err)
	}
	t.Setenv("SESSION_SECRET", strings.Repeat("s", 32))
	if _, err := Load(); err != nil {
		t.Errorf("32-byte secret: got %v, want it accepted", err)
	}
}

func TestAllowedHosts(t *testing.T) {
	for _, tc := range []struct {
		addr, extra string
		want        []string
	}{
		{"127.0.0.1:8080", "", []string{"localhost:8080", "127.0.0.1:8080", "[::1]:8080"}},
		{":8080", "shop.example", []string{"localhost:8080", "127.0.0.1:8080", "[::1]:8080", "shop.example"}},
		{"10.0.0.5:80", " shop.example:443 , ", []string{"10.0.0.5:80", "shop.example:443"}},
	} {
		got, err := allowedHosts(tc.addr, tc.extra)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("allowedHosts(%q, %q): got %v, %v, want %v", tc.addr, tc.extra, got, err, tc.want)
		}
	}
	if _, err := allowedHosts("127.0.0.1:8080", "http://shop.example/"); err == nil {
		t.Error("a URL in ALLOWED_HOSTS: got no error")
	}
}

func TestLockTimeoutMustOutlastProviderTimeout(t *testing.T) {
	for _, tc := range []struct {
		lock, provider time.Duration
		ok             bool
	}{
		{30 * time.Second, 10 * time.Second, true}, // the defaults
		{15 * time.Second, 10 * time.Second, true}, // the least the error suggests
		{10 * time.Second, 10 * time.Second, false},
		{14 * time.Second, 10 * time.Second, false}, // three quarters of it leave no second to spare
		{time.Second, 5 * time.Second, false},
	} {
		err := checkLockTimeout(tc.lock, tc.provider)
		if (err == nil) != tc.ok {
			t.Errorf("lock %s, provider %s: got %v, want ok=%v", tc.lock, tc.provider, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "LOCK_TIMEOUT") {
			t.Errorf("got %q, want the error to name LOCK_TIMEOUT", err)
		}
	}
}

func TestLoadRefusesShortLock(t *testing.T) {
	validEnv(t)
	t.Setenv("LOCK_TIMEOUT", "5s")
	t.Setenv("PROVIDER_TIMEOUT", "10s")
	_, err := Load()
	if err == nil || !strings.Contains(err.Error(), "at least 15s") {
		t.Errorf("got %v, want LOCK_TIMEOUT refused with the least acceptable value", err)
	}
}

func TestRememberedAnswers(t *testing.T) {
	validEnv(t)
	for _, tc := range []struct {
		env  string
		want int
		ok   bool
	}{
		{"", 10_000, true}, {"0", 0, true}, {"500", 500, true},
		{"-1", 0, false}, {"lots", 0, false}, {"1.5", 0, false},
	} {
		t.Setenv("REMEMBERED_ANSWERS", tc.env)
		c, err := Load()
		if (err == nil) != tc.ok || (tc.ok && c.RememberedAnswers != tc.want) {
			t.Errorf("REMEMBERED_ANSWERS=%q: got %d, %v, want %d (ok=%v)", tc.env, c.RememberedAnswers, err, tc.want, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "REMEMBERED_ANSWERS") {
			t.Errorf("got %q, want the error to name REMEMBERED_ANSWERS", err)
		}
	}
}

// AUTHENTICATION_WINDOW is how long an order waits for its shopper's 3-D
// Secure: 15 minutes by default, a positive duration, and shorter than
// KEY_RETENTION, or the key could be swept while the shopper is at the
// bank.
func TestAuthenticationWindow(t *testing.T) {
	validEnv(t)
	for _, tc := range []struct {
		env  string
		want time.Duration
		ok   bool
	}{
		{"", 15 * time.Minute, true}, {"2m", 2 * time.Minute, true},
		{"0s", 0, false}, {"soon", 0, false}, {"25h", 0, false},
	} {
		t.Setenv("AUTHENTICATION_WINDOW", tc.env)
		c, err := Load()
		if (err == nil) != tc.ok || (tc.ok && c.AuthenticationWindow != tc.want) {
			t.Errorf("AUTHENTICATION_WINDOW=%q: got %s, %v, want %s (ok=%v)", tc.env, c.AuthenticationWindow, err, tc.want, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "AUTHENTICATION_WINDOW") {
			t.Errorf("got %q, want the error to name AUTHENTICATION_WINDOW", err)
		}
	}
}

// validEnv sets the settings the shop cannot start without: a database
// and a provider, reached over HTTP (the fake's URL here).
func validEnv(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://localhost/x")
	t.Setenv("PAYMENT_PROVIDER", "")
	t.Setenv("STRIPE_API_BASE", "http://127.0.0.1:8081")
	t.Setenv("STRIPE_SECRET_KEY", "sk_test_provider")
	t.Setenv("STRIPE_WEBHOOK_SECRET", "whsec_0123456789")
}

// The shop runs no provider of its own: with the fake (the default), it
// refuses to start without the fake's URL, and says what to set and where
// one comes from, rather than sending charges to Stripe's own address.
func TestTheFakeNeedsItsURL(t *testing.T) {
	validEnv(t)
	t.Setenv("STRIPE_API_BASE", "")
	if _, err := loadServing(); err == nil || !strings.Contains(err.Error(), "STRIPE_API_BASE") || !strings.Contains(err.Error(), "make run") {
		t.Errorf("the fake without STRIPE_API_BASE: got %v, want it refused, naming STRIPE_API_BASE and make run", err)
	}
	// What only serving needs: `web sweep` and `web worker` start without it.
	if _, err := Load(); err != nil {
		t.Errorf("without STRIPE_API_BASE, for sweep and worker: got %v, want it loaded", err)
	}
	t.Setenv("PAYMENT_PROVIDER", "stripe")
	c, err := loadServing()
	if err != nil || c.StripeAPIBase != "https://api.stripe.com" {
		t.Errorf("Stripe without STRIPE_API_BASE: got %q, %v, want https://api.stripe.com", c.StripeAPIBase, err)
	}
}

func TestJobsPoolSize(t *testing.T) {
	validEnv(t)
	for env, want := range map[string]int{"": 4, "2": 2, "0": -1, "x": -1, "1.5": -1} {
		t.Setenv("JOBS_DB_MAX_CONNS", env)
		c, err := Load()
		if want < 0 {
			if err == nil || !strings.Contains(err.Error(), "JOBS_DB_MAX_CONNS") {
				t.Errorf("JOBS_DB_MAX_CONNS=%q: got %v, want it refused", env, err)
			}
			continue
		}
		if err != nil || c.JobsDBMaxConns != want {
			t.Errorf("JOBS_DB_MAX_CONNS=%q: got %d, %v, want %d", env, c.JobsDBMaxConns, err, want)
		}
	}
}

// Tracing is on by default, every trace sampled and kept in memory, none
// exported; OpenTelemetry's own variables change that, and a value that
// makes no sense stops the start.
func TestTracing(t *testing.T) {
	validEnv(t)
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if tr := c.Tracing; tr.Off || tr.Endpoint != "" || tr.SampleRatio != 1 || tr.RecentBytes != 16<<20 {
		t.Errorf("defaults: got %+v, want on, no exporter, all sampled, 16 MiB kept", tr)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")
	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
	t.Setenv("OTEL_TRACES_SAMPLER_ARG", "0.25")
	t.Setenv("RECENT_TRACES_MIB", "0")
	t.Setenv("OTEL_SERVICE_NAME", "shop-eu")
	if c, err = Load(); err != nil {
		t.Fatal(err)
	}
	if tr := c.Tracing; tr.Endpoint != "http://collector:4318" || tr.SampleRatio != 0.25 || tr.RecentBytes != 0 || tr.ServiceName != "shop-eu" {
		t.Errorf("set: got %+v", tr)
	}
	for env, value := range map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318", "OTEL_TRACES_SAMPLER": "always_on",
		"OTEL_TRACES_SAMPLER_ARG": "2", "RECENT_TRACES_MIB": "-1", "OTEL_SDK_DISABLED": "maybe",
	} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, value)
			if _, err := Load(); err == nil || !strings.Contains(err.Error(), env) {
				t.Errorf("%s=%q: got %v, want it refused", env, value, err)
			}
		})
	}
}

// TestWebhookSecretRequiredWithAProviderElsewhere: with STRIPE_API_BASE set
// (the fake, or Stripe) and no
// STRIPE_WEBHOOK_SECRET, the shop would mount POST /webhooks/stripe and
// verify signatures against an empty key, which anyone can sign with
// (issue 33): it refuses to start, naming the variable.
func TestWebhookSecretRequiredWithAProviderElsewhere(t *testing.T) {
	validEnv(t)
	t.Setenv("STRIPE_WEBHOOK_SECRET", "")
	if _, err := loadServing(); err == nil || !strings.Contains(err.Error(), "STRIPE_WEBHOOK_SECRET") {
		t.Errorf("got %v, want an error naming STRIPE_WEBHOOK_SECRET", err)
	}
	t.Setenv("STRIPE_WEBHOOK_SECRET", "whsec_0123456789")
	if _, err := loadServing(); err != nil {
		t.Errorf("with the secret: got %v, want it accepted", err)
	}
}

// loadServing is Load and the checks of the process that serves.
func loadServing() (Config, error) {
	c, err := Load()
	if err != nil {
		return c, err
	}
	return c, c.CheckProvider()
}
