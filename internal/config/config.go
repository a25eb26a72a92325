// Package config reads the application's settings from the environment,
// once, at start-up. Every setting has a default that suits local use, and
// a bad value stops the process with a message naming the variable.
package config

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/tracing"
)

// Config is every setting of the web binary.
type Config struct {
	// DatabaseURL is the PostgreSQL connection string (required; `make
	// run` starts a project-local server and sets it).
	DatabaseURL string
	// Addr is the listen address of the HTTP server.
	Addr string
	// LockTimeout is how long a claimed idempotency key stays locked.
	LockTimeout time.Duration
	// ProviderTimeout bounds one call to the payment provider.
	ProviderTimeout time.Duration
	// Demo turns on the demo controls (fault injection, stats).
	Demo bool
	// LogFormat is "text" or "json".
	LogFormat string
	// ShutdownTimeout is how long in-flight requests get to finish on
	// SIGTERM before they are cut off.
	ShutdownTimeout time.Duration
	// LogLevel is debug, info, warn or error.
	LogLevel slog.Level
	// KeyRetention is how long an idempotency key is kept after its
	// creation; then the sweeper deletes it (if finished) and the same key
	// starts a new operation.
	KeyRetention time.Duration
	// CompleterInterval spaces the completer's passes over stuck keys.
	CompleterInterval time.Duration
	// AuthenticationWindow is how long an order waits for its shopper's
	// 3-D Secure before the completer cancels its payment.
	AuthenticationWindow time.Duration
	// CompleterGrace is how long after its creation a key is left to its
	// client's retries before the completer may settle it.
	CompleterGrace time.Duration
	// CancelWindow is how long after it is placed a customer may cancel an
	// order (CANCEL_WINDOW, default 1h).
	CancelWindow time.Duration
	// SweepInterval spaces the sweeper's passes over expired keys.
	SweepInterval time.Duration
	// ReconcileInterval spaces the reconciler's passes over the provider's
	// charges.
	ReconcileInterval time.Duration
	// SessionSecret signs the browser shoppers' cookies and the keys of
	// their checkout forms: at least MinSessionSecret bytes, ideally 32
	// random bytes in hex (`make run` makes one in .data/session-secret).
	// Every instance behind one address needs the same one. When empty, a
	// random secret is made at start and sessions do not survive a restart.
	SessionSecret string
	// AllowedHosts are the Host header values the server answers for:
	// the names ADDR is reached by, plus ALLOWED_HOSTS (comma-separated;
	// "name" allows any port, "name:port" only that one). Others get 421.
	AllowedHosts []string
	// AdminAddr is where /metrics and pprof are served, apart from the
	// shop (ADMIN_ADDR, such as 127.0.0.1:9090); empty means not at all.
	AdminAddr string
	// AdminHosts are the Host names the admin listener answers for: the
	// names ADMIN_ADDR is reached by, and ALLOWED_HOSTS' (hosts.OfAddress).
	AdminHosts []string
	// AdminToken is the operator's credential (ADMIN_TOKEN, 32 characters
	// or more): with it, River UI on the admin listener asks for it (HTTP
	// basic auth, any user name, or a bearer token) and may act on jobs;
	// without it, River UI is read-only.
	AdminToken string
	// CustomersPerMinute and CustomerBurst limit the anonymous customers
	// (API customers, browser shoppers) one client address may create:
	// CustomerBurst at once, then CustomersPerMinute. Zero means the
	// defaults (web.DefaultCustomerQuota: 60 a minute, 100 at once).
	CustomersPerMinute float64
	CustomerBurst      int
	// The write limits (web.WriteLimits): new orders, pickups and
	// carts per customer (WRITES_PER_MINUTE, WRITE_BURST) and per client
	// address (ADDRESS_WRITES_PER_MINUTE, ADDRESS_WRITE_BURST), declined
	// payments per customer (DECLINES_PER_HOUR, DECLINE_BURST), and writes
	// of one customer and of one address at once (WRITES_IN_FLIGHT,
	// ADDRESS_WRITES_IN_FLIGHT). Zero means the default.
	WritesPerMinute, AddressWritesPerMinute, DeclinesPerHour                           float64
	WriteBurst, AddressWriteBurst, DeclineBurst, WritesInFlight, AddressWritesInFlight int
	// RememberedAnswers is how many finished keys' answers each process
	// keeps in memory, for a minute, so that a replay costs no database
	// round trip (REMEMBERED_ANSWERS, default 10000; 0 remembers none).
	RememberedAnswers int
	// PaymentProvider is "fake" (PAYMENT_PROVIDER, the default: the fake
	// Stripe, fakestripe/cmd/fakestripe, a process of its own that `make
	// run` starts) or "stripe" (Stripe's API, test mode with an sk_test_
	// key).
	PaymentProvider string
	// StripeAPIBase is the API's base URL (STRIPE_API_BASE): with stripe
	// https://api.stripe.com by default; with fake, the fake's URL
	// (required).
	StripeAPIBase string
	// StripeSecretKey is Stripe's secret key (STRIPE_SECRET_KEY), or the
	// key the fake was started with.
	StripeSecretKey string
	// StripeWebhookSecret verifies Stripe-Signature on /webhooks/stripe
	// (STRIPE_WEBHOOK_SECRET, whsec_…): the secret the provider signs with.
	StripeWebhookSecret string
	// DBMaxConns caps the pgx pool (DB_MAX_CONNS); zero keeps pgx's
	// default, the greater of 4 and the number of CPUs. Instances ×
	// DB_MAX_CONNS must stay below PostgreSQL's max_connections (minus its
	// reserved ones), or below PgBouncer's default_pool_size when the
	// shops connect through it. See docs/performance.md.
	DBMaxConns int
	// JobsDBMaxConns caps the pool of the outbox's jobs (JOBS_DB_MAX_CONNS,
	// default 4), a pool of their own beside DB_MAX_CONNS: a job holds a
	// connection only for its short transactions, never while it talks to
	// the mail server, so a few serve many workers. Count it in the
	// connection budget too.
	JobsDBMaxConns int
	// DBQueryMode is pgx's query exec mode (DB_QUERY_MODE): cache_statement
	// (pgx's default), cache_describe (for PgBouncer in transaction
	// pooling, which before 1.21 has no prepared statements),
	// describe_exec, exec or simple_protocol. Empty keeps pgx's default.
	DBQueryMode string
	// MigrateDatabaseURL is where the migrations run
	// (MIGRATE_DATABASE_URL): a direct connection to PostgreSQL, because
	// goose holds a session-level advisory lock, which a transaction
	// pooler such as PgBouncer would not keep on one server connection.
	// Empty means DatabaseURL.
	MigrateDatabaseURL string
	// RunJobs works the outbox's jobs (loyalty points, confirmation mail)
	// in the web process (RUN_JOBS, default on); turn it off when `web
	// worker` processes do the work.
	RunJobs bool
	// RequireSyncReplica refuses every write of a key, and fails /readyz's
	// durability check, while no synchronous standby confirms the
	// database's commits (REQUIRE_SYNC_REPLICA, default off: a single
	// server is fine for development, and the shop only warns when
	// standbys are asynchronous).
	RequireSyncReplica bool
	// SMTPAddr is the SMTP server confirmation mail goes to (SMTP_ADDR,
	// default 127.0.0.1:1025, a local mail catcher's usual port; `make run`
	// sets its own catcher's).
	SMTPAddr string
	// MailCatcherURL is the HTTP address of the demo's mail catcher
	// (MAIL_CATCHER_URL, which make run sets): the admin listener shows its
	// caught mail at /mail. Empty shows none.
	MailCatcherURL string
	// MailFrom is the confirmations' sender (MAIL_FROM).
	MailFrom string
	// JobRescueAfter is how long an outbox job may stay running before it
	// is taken for dead and delivered again, at River's next rescuer pass
	// (outbox.RescuerInterval) (JOB_RESCUE_AFTER, default 1m); the chaos
	// harness shortens it to see its kills' jobs rerun.
	JobRescueAfter time.Duration
	// Tracing is how spans are made, kept and exported (tracing.go):
	// OTEL_SDK_DISABLED, OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_ENDPOINT,
	// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, RECENT_TRACES_MIB.
	Tracing tracing.Config
}

// MinSessionSecret is the shortest SESSION_SECRET accepted, in bytes. The
// secret signs sessions and checkout form keys; a short one can be found
// by trying candidates against one cookie, offline.
const MinSessionSecret = 32

// Load reads the environment.
func Load() (Config, error) {
	c := Config{
		DatabaseURL: os.Getenv("DATABASE_URL"),
		Addr:        getenv("ADDR", "127.0.0.1:8080"),
		LogFormat:   getenv("LOG_FORMAT", "text"),
		// Read as given: it is hashed into keys, so its form does not matter.
		SessionSecret: os.Getenv("SESSION_SECRET"),
		AdminAddr:     os.Getenv("ADMIN_ADDR"),

		PaymentProvider:     getenv("PAYMENT_PROVIDER", "fake"),
		StripeAPIBase:       os.Getenv("STRIPE_API_BASE"),
		StripeSecretKey:     os.Getenv("STRIPE_SECRET_KEY"),
		StripeWebhookSecret: os.Getenv("STRIPE_WEBHOOK_SECRET"),
	}
	var err error
	if c.LockTimeout, err = duration("LOCK_TIMEOUT", 30*time.Second); err != nil {
		return c, err
	}
	if c.ProviderTimeout, err = duration("PROVIDER_TIMEOUT", 10*time.Second); err != nil {
		return c, err
	}
	if c.ShutdownTimeout, err = duration("SHUTDOWN_TIMEOUT", 15*time.Second); err != nil {
		return c, err
	}
	if c.Demo, err = boolean("DEMO", false); err != nil {
		return c, err
	}
	if c.LogLevel, err = logging.ParseLevel(getenv("LOG_LEVEL", "info")); err != nil {
		return c, fmt.Errorf("LOG_LEVEL: %w", err)
	}
	if c.KeyRetention, err = duration("KEY_RETENTION", 24*time.Hour); err != nil {
		return c, err
	}
	if c.CompleterInterval, err = duration("COMPLETER_INTERVAL", 10*time.Second); err != nil {
		return c, err
	}
	if c.CompleterGrace, err = duration("COMPLETER_GRACE", time.Minute); err != nil {
		return c, err
	}
	if c.CancelWindow, err = duration("CANCEL_WINDOW", time.Hour); err != nil {
		return c, err
	}
	if c.AuthenticationWindow, err = duration("AUTHENTICATION_WINDOW", 15*time.Minute); err != nil {
		return c, err
	}
	if c.AuthenticationWindow >= c.KeyRetention {
		// The key must outlive the wait, or a shopper back from the bank
		// would find it swept and pay again under a new operation.
		return c, fmt.Errorf("AUTHENTICATION_WINDOW (%s) must be shorter than KEY_RETENTION (%s)",
			c.AuthenticationWindow, c.KeyRetention)
	}
	if c.SweepInterval, err = duration("SWEEP_INTERVAL", time.Minute); err != nil {
		return c, err
	}
	if c.ReconcileInterval, err = duration("RECONCILE_INTERVAL", time.Minute); err != nil {
		return c, err
	}
	if err := checkLockTimeout(c.LockTimeout, c.ProviderTimeout); err != nil {
		return c, err
	}
	if c.CompleterGrace <= c.ProviderTimeout {
		// The completer takes "no charge" for a final answer: by then the
		// attempt's own provider call must have ended.
		return c, fmt.Errorf("COMPLETER_GRACE (%s) must be longer than PROVIDER_TIMEOUT (%s)",
			c.CompleterGrace, c.ProviderTimeout)
	}
	if c.KeyRetention <= c.CompleterGrace+c.LockTimeout {
		// A key must outlive its chance of being settled by a retry or the
		// completer, or clients would be told to stop retrying too early.
		return c, fmt.Errorf("KEY_RETENTION (%s) must be longer than COMPLETER_GRACE plus LOCK_TIMEOUT (%s)",
			c.KeyRetention, c.CompleterGrace+c.LockTimeout)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c, fmt.Errorf(`LOG_FORMAT: want "text" or "json", got %q`, c.LogFormat)
	}
	if c.CustomersPerMinute, err = number("CUSTOMERS_PER_MINUTE"); err != nil {
		return c, err
	}
	burst, err := number("CUSTOMER_BURST")
	if err != nil {
		return c, err
	}
	c.CustomerBurst = int(burst)
	for key, v := range map[string]*float64{"WRITES_PER_MINUTE": &c.WritesPerMinute,
		"ADDRESS_WRITES_PER_MINUTE": &c.AddressWritesPerMinute, "DECLINES_PER_HOUR": &c.DeclinesPerHour} {
		if *v, err = number(key); err != nil {
			return c, err
		}
	}
	for key, v := range map[string]*int{"WRITE_BURST": &c.WriteBurst, "ADDRESS_WRITE_BURST": &c.AddressWriteBurst,
		"DECLINE_BURST": &c.DeclineBurst, "WRITES_IN_FLIGHT": &c.WritesInFlight, "ADDRESS_WRITES_IN_FLIGHT": &c.AddressWritesInFlight} {
		if *v, err = count(key, 0); err != nil {
			return c, err
		}
	}
	if c.RememberedAnswers, err = count("REMEMBERED_ANSWERS", 10_000); err != nil {
		return c, err
	}
	if c.AdminAddr != "" {
		if c.AdminHosts, err = allowedHosts(c.AdminAddr, os.Getenv("ALLOWED_HOSTS")); err != nil {
			return c, fmt.Errorf("ADMIN_ADDR: want host:port such as 127.0.0.1:9090, got %q", c.AdminAddr)
		}
	}
	if c.AdminToken = os.Getenv("ADMIN_TOKEN"); c.AdminToken != "" && len(c.AdminToken) < 32 {
		return c, fmt.Errorf("ADMIN_TOKEN: want at least 32 characters (such as the output of `head -c 24 /dev/urandom | base64`), got %d", len(c.AdminToken))
	}
	if c.AllowedHosts, err = allowedHosts(c.Addr, os.Getenv("ALLOWED_HOSTS")); err != nil {
		return c, err
	}
	if n := len(c.SessionSecret); n > 0 && n < MinSessionSecret {
		return c, fmt.Errorf("SESSION_SECRET is %d bytes long; it must be at least %d, such as 32 random bytes in hex, or unset for a random one that lasts until the process stops", n, MinSessionSecret)
	}
	maxConns, err := number("DB_MAX_CONNS")
	if err != nil || maxConns != float64(int(maxConns)) || maxConns > 10000 {
		return c, fmt.Errorf("DB_MAX_CONNS: want a whole number of connections from 1 to 10000, got %q", os.Getenv("DB_MAX_CONNS"))
	}
	c.DBMaxConns = int(maxConns)
	jobConns, err := number("JOBS_DB_MAX_CONNS")
	if err != nil || jobConns != float64(int(jobConns)) || jobConns > 10000 || os.Getenv("JOBS_DB_MAX_CONNS") != "" && jobConns < 1 {
		return c, fmt.Errorf("JOBS_DB_MAX_CONNS: want a whole number of connections from 1 to 10000, got %q", os.Getenv("JOBS_DB_MAX_CONNS"))
	}
	if c.JobsDBMaxConns = int(jobConns); c.JobsDBMaxConns == 0 {
		c.JobsDBMaxConns = 4
	}
	c.DBQueryMode = os.Getenv("DB_QUERY_MODE")
	if c.DBQueryMode != "" {
		if _, err := database.ParseQueryMode(c.DBQueryMode); err != nil {
			return c, fmt.Errorf("DB_QUERY_MODE: %w", err)
		}
	}
	c.MigrateDatabaseURL = os.Getenv("MIGRATE_DATABASE_URL")
	if c.RunJobs, err = boolean("RUN_JOBS", true); err != nil {
		return c, err
	}
	if c.RequireSyncReplica, err = boolean("REQUIRE_SYNC_REPLICA", false); err != nil {
		return c, err
	}
	c.MailFrom = getenv("MAIL_FROM", "shop@exactlyonce.test")
	c.SMTPAddr = getenv("SMTP_ADDR", "127.0.0.1:1025")
	c.MailCatcherURL = os.Getenv("MAIL_CATCHER_URL")
	if c.JobRescueAfter, err = duration("JOB_RESCUE_AFTER", time.Minute); err != nil {
		return c, err
	}
	if c.Tracing, err = loadTracing(); err != nil {
		return c, err
	}
	if c.DatabaseURL == "" {
		return c, fmt.Errorf("DATABASE_URL is not set: point it at PostgreSQL, or use `make run`, which starts a local server")
	}
	return c, nil
}

// lockSlack is what a provider call must leave of the time an attempt's lock
// grants it unrenewed, for the claim before the call and the finish after.
const lockSlack = time.Second

// checkLockTimeout refuses a lock too short for the provider timeout. An
// attempt whose renewals fail stops its own provider call when a quarter of
// its lock is left (checkout.FenceAt), so a normal call, bounded by
// PROVIDER_TIMEOUT, must fit in the other three quarters with lockSlack to
// spare: then even without a single renewal the call ends, by its own
// timeout, before the lock can expire and a retry or the completer can take
// the key over.
func checkLockTimeout(lock, provider time.Duration) error {
	if checkout.FenceAt(lock) > provider+lockSlack {
		return nil
	}
	// The shortest lock that passes, rounded up to a whole second.
	least := ((provider+lockSlack)*4/3 + time.Second).Truncate(time.Second)
	return fmt.Errorf("LOCK_TIMEOUT (%s) must be longer than PROVIDER_TIMEOUT (%s) plus a margin, at least %s: "+
		"an attempt that cannot renew its lock stops its provider call when a quarter of the lock is left, "+
		"and a call must be able to end before that", lock, provider, least)
}

func getenv(key, fallback string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return fallback
}

func duration(key string, fallback time.Duration) (time.Duration, error) {
	v := os.Getenv(key)
	if v == "" {
		return fallback, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: want a positive Go duration such as 30s or 1m, got %q", key, v)
	}
	return d, nil
}

// number reads a positive number, or zero when the variable is unset.
func number(key string) (float64, error) {
	v := os.Getenv(key)
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f > 1e9 {
		return 0, fmt.Errorf("%s: want a positive number, got %q", key, v)
	}
	return f, nil
}

// count reads a whole number of zero or more, fallback when unset.
func count(key string, fallback int) (int, error) {
	v := os.Getenv(key)
	if v == "" {
		return fallback, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1e9 {
		return 0, fmt.Errorf("%s: want a whole number from 0 to 1000000000, got %q", key, v)
	}
	return n, nil
}

func boolean(key string, fallback bool) (bool, error) {
	v := os.Getenv(key)
	if v == "" {
		return fallback, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s: want 1 or 0 (true or false), got %q", key, v)
	}
	return b, nil
}

// CheckProvider checks the payment provider's settings, which only the
// process that serves needs: `web sweep` and `web worker` never call the
// provider, and a cron entry should not need its keys. The shop reaches its
// provider only over HTTP, Stripe or the fake alike, so both need the same
// three settings.
func (c *Config) CheckProvider() error {
	switch c.PaymentProvider {
	case "fake":
		if c.StripeAPIBase == "" {
			return fmt.Errorf("PAYMENT_PROVIDER=fake (the default) needs STRIPE_API_BASE: the fake Stripe's URL, such as http://127.0.0.1:8081 (`make run` starts one, fakestripe/cmd/fakestripe)")
		}
	case "stripe":
		if c.StripeAPIBase == "" {
			c.StripeAPIBase = "https://api.stripe.com"
		}
	default:
		return fmt.Errorf("PAYMENT_PROVIDER: want fake or stripe, got %q", c.PaymentProvider)
	}
	if u, err := url.Parse(c.StripeAPIBase); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" {
		return fmt.Errorf("STRIPE_API_BASE: want an http:// or https:// URL with no path, such as http://127.0.0.1:8081, got %q", c.StripeAPIBase)
	}
	if c.StripeSecretKey == "" {
		return fmt.Errorf("STRIPE_SECRET_KEY is not set: an sk_test_… key from Stripe's dashboard, or the key the fake was started with")
	}
	if c.StripeWebhookSecret == "" {
		// The shop mounts POST /webhooks/stripe, and Stripe's SDK verifies
		// a signature against an empty key, which anyone can make: a
		// forged payment_intent.succeeded would be believed.
		return fmt.Errorf("STRIPE_WEBHOOK_SECRET is not set: POST /webhooks/stripe would accept events signed with an empty key; set it to the secret the provider signs with (the fake's STRIPE_WEBHOOK_SECRET, or whsec_… from Stripe)")
	}
	return nil
}
