// Package app assembles the shop from its parts: the database, the catalog,
// the payment client that calls the provider over HTTP (Stripe, or the
// fake as a program of its own), the checkout engine, the HTTP handlers,
// and a demo when one is mounted (Demo). cmd/web, demo/cmd/demo and the tests
// build the application through New, so the tests run what production
// runs.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/riverqueue/river"

	"exactlyonce/idem"
	"exactlyonce/internal/api"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/handlers"
	"exactlyonce/internal/lifecycle"
	"exactlyonce/internal/metrics"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/pickup"
	"exactlyonce/internal/readiness"
	"exactlyonce/internal/refund"
	"exactlyonce/internal/stripehook"
	"exactlyonce/internal/tracing"
	"exactlyonce/internal/web"
)

// Config is what New needs beyond the pool.
type Config struct {
	// BaseURL is where this server is reached over loopback, such as
	// http://127.0.0.1:8080: the lab sends its scenarios' requests to it.
	BaseURL         string
	LockTimeout     time.Duration
	ProviderTimeout time.Duration
	// FinishTimeout bounds the statement that writes an order (see
	// checkout.Config); zero means the engine's default.
	FinishTimeout time.Duration
	// Demo, when set, is mounted on the shop (demo/cmd/demo's lab; see
	// Demo); nil serves the shop alone.
	Demo Demo
	// Hooks are passed to the checkout engine; tests use them.
	Hooks checkout.Hooks
	Log   *slog.Logger

	// KeyRetention is how long a key is kept after its creation (default
	// 24 h); published at /api/idempotency-policy.
	KeyRetention time.Duration
	// CancelWindow is how long after it is placed a customer may cancel
	// an order (refund.DefaultCancelWindow when zero).
	CancelWindow time.Duration
	// RefundHooks are the refunds' test signals (refund.Hooks).
	RefundHooks refund.Hooks
	// CompleterGrace is how long a key is left to its client's retries
	// before the completer may settle it (see checkout.CompleterConfig).
	CompleterGrace time.Duration
	// CompleterInterval and SweepInterval space the background passes that
	// StartWorkers runs; zero disables a worker (tests run passes directly).
	CompleterInterval time.Duration
	SweepInterval     time.Duration
	// SessionSecret signs the browser shop's cookies and checkout form
	// keys; empty means a random one, good for this process only.
	SessionSecret string
	// AllowedHosts are the Host names (host or host:port) the server
	// answers for, besides BaseURL's, which is always allowed: the lab's
	// requests and the fake's webhooks come through it.
	AllowedHosts []string
	// CustomerQuota limits the anonymous customers one client address may
	// create (API and browser); zero means web.DefaultCustomerQuota.
	CustomerQuota web.CustomerQuota
	// WriteLimits bound what one customer and one address may store (see
	// web.WriteLimits); zero fields are the defaults.
	WriteLimits web.WriteLimits
	// RememberedAnswers is how many finished keys' answers the order flow
	// and the pickup form each keep in memory (idem.Answers), for
	// rememberFor, so that replays skip the database: zero means
	// DefaultRememberedAnswers, less than zero none.
	RememberedAnswers int
	// CatalogMaxAge is how stale the in-memory catalog may get; zero means
	// catalogMaxAge. Tests shorten it to see a catalog change at once.
	CatalogMaxAge time.Duration

	// StripeAPIBase is the base URL of Stripe (https://api.stripe.com, the
	// default when empty) or of the fake Stripe (fakestripe/cmd/fakestripe,
	// which make run, the tests and the bench start beside the shop),
	// reached with StripeSecretKey. With Demo, the lab sets the fake's
	// faults through its control API there.
	StripeAPIBase   string
	StripeSecretKey string
	// StripeWebhookSecret verifies the webhooks at /webhooks/stripe.
	StripeWebhookSecret string

	// ProviderKeyWindow is how long the provider remembers idempotency keys
	// (see checkout.Config); zero means checkout.DefaultProviderKeyWindow.
	ProviderKeyWindow time.Duration
	// AuthenticationWindow is how long an order waits for its shopper's
	// 3-D Secure before the completer cancels its payment (see
	// checkout.Config); zero means checkout.DefaultAuthenticationWindow.
	AuthenticationWindow time.Duration
	// MaxSettleAttempts is how many failed settlements park a key (see
	// checkout.CompleterConfig); zero means the default.
	MaxSettleAttempts int
	// ReconcileInterval spaces the reconciler's passes; zero disables it.
	ReconcileInterval time.Duration
	// ReconcilerHooks are passed to the reconciler; tests use them.
	ReconcilerHooks lifecycle.ReconcilerHooks

	// RunJobs works the outbox's jobs (loyalty points, confirmation mail)
	// in this process while Serve runs; off, another process does
	// (`web worker`). Tests that work jobs start Jobs themselves.
	RunJobs bool
	// Jobs configures the consumers.
	Jobs JobsConfig
	// AdminHosts are the Host names the admin listener answers for besides
	// its own address's, and AdminToken the operator's credential for River
	// UI (see guardAdmin).
	AdminHosts []string
	AdminToken string
	// MailCatcherURL is the demo's mail catcher's HTTP address
	// (MAIL_CATCHER_URL, which make run sets), whose caught mail the admin
	// listener shows at /mail; empty shows none. The catcher runs beside
	// the shop, as a process of its own.
	MailCatcherURL string
	// Tracing is the process's tracer provider and its recent traces
	// (tracing.New), which the admin listener shows at /traces; nil is
	// tracing off.
	Tracing *tracing.Tracing
	// AdminURL is where the operator's browser reaches the admin listener
	// (ADMIN_ADDR), for the key inspector's link to a key's traces; empty
	// shows no link.
	AdminURL string
}

// DefaultKeyRetention is the retention window when none is configured.
const DefaultKeyRetention = 24 * time.Hour

// App is the assembled application.
type App struct {
	Echo     *echo.Echo
	DB       *database.DB
	Checkout *checkout.Engine
	// Payments is the client of the provider the engine and the background
	// workers use.
	Payments  *payment.Client
	Metrics   *metrics.Metrics
	Completer *checkout.Completer
	// Refunds runs cancels and refunds; its keys have a completer and a
	// sweeper of their own (StartWorkers).
	Refunds *refund.Service
	// refundKeys signs the admin listener's refund forms (admin_refund.go).
	refundKeys *idem.Forms
	Sweeper    *lifecycle.Sweeper
	// Reconciler refunds charges that no order holds.
	Reconciler *lifecycle.Reconciler
	// Keys is the idem kit's key store (the pickup form's keys).
	Keys *idem.Store
	// Readiness is what GET /readyz reports, on the shop's listener and
	// the admin one.
	Readiness *readiness.Checker
	// Jobs is the River client of the outbox's jobs: it works them when
	// Config.RunJobs is on (Serve starts it), and lists them for the jobs
	// view either way.
	Jobs *river.Client[pgx.Tx]
	// jobsErr is why Jobs could not be built; Serve returns it.
	jobsErr error
	// deploymentErr is why this deployment's marker could not be read;
	// Serve returns it: intents created without it would be taken for
	// someone else's.
	deploymentErr error
	// Tracing is Config.Tracing, or tracing off.
	Tracing *tracing.Tracing
	// handler is Echo behind its server spans (Handler).
	handler http.Handler

	cfg Config
	// demo is what Config.Demo mounted; zero without one.
	demo Mounted
	// Demo is Config.Demo, for tests that drive the demo.
	Demo Demo
}

// deploymentReadTimeout bounds the read of the deployment's marker at
// start.
const deploymentReadTimeout = 10 * time.Second

// catalogMaxAge is how stale the in-memory catalog may get.
const catalogMaxAge = 5 * time.Second

// New builds the application on a migrated database.
func New(pool *pgxpool.Pool, cfg Config) *App {
	d := database.New(pool)
	if cfg.CatalogMaxAge <= 0 {
		cfg.CatalogMaxAge = catalogMaxAge
	}
	cat := catalog.New(d.Queries, cfg.CatalogMaxAge)
	if cfg.Tracing == nil {
		cfg.Tracing = tracing.Off()
	}
	tp := cfg.Tracing.Provider

	// This deployment's marker, written on every PaymentIntent the shop
	// creates, so that the reconciler and the webhook handler refund no
	// intent this database did not make. Serve refuses to start without
	// it.
	var deployment string
	var deploymentErr error
	if pool != nil {
		ctx, cancel := context.WithTimeout(context.Background(), deploymentReadTimeout)
		deployment, deploymentErr = d.DeploymentID(ctx)
		cancel()
		if deploymentErr != nil {
			deploymentErr = fmt.Errorf("read deployment id: %w", deploymentErr)
		}
	}
	payments := paymentClient(cfg, deployment)
	if cfg.KeyRetention <= 0 {
		cfg.KeyRetention = DefaultKeyRetention
	}
	m := metrics.New()
	if pool != nil {
		m.RegisterPool(pool)
		m.RegisterDurability(func(ctx context.Context) (metrics.Durability, error) {
			r, err := d.ReplicationState(ctx)
			return metrics.Durability{Synchronous: r.Synchronous(), AtRisk: r.Risk() != ""}, err
		})
	}
	hooks := cfg.Hooks
	var demo Mounted
	if cfg.Demo != nil {
		shop := DemoShop{BaseURL: cfg.BaseURL, DB: d, LockTimeout: cfg.LockTimeout, ProviderTimeout: cfg.ProviderTimeout,
			AuthenticationWindow: cfg.AuthenticationWindow, StripeAPIBase: cfg.StripeAPIBase, StripeSecretKey: cfg.StripeSecretKey, Log: cfg.Log}
		if cfg.Tracing.Recent != nil {
			shop.AdminURL = cfg.AdminURL
		}
		demo = cfg.Demo.Mount(shop)
		hooks.BeforeRenew = bothHooks(demo.Hooks.BeforeRenew, hooks.BeforeRenew)
		hooks.BeforeFence = bothHooks(demo.Hooks.BeforeFence, hooks.BeforeFence)
		hooks.BeforeFinish = bothHooks(demo.Hooks.BeforeFinish, hooks.BeforeFinish)
		cfg.Jobs.LoyaltyHooks.AfterAward = bothErrHooks(demo.AfterAward, cfg.Jobs.LoyaltyHooks.AfterAward)
	}
	engine := checkout.New(d, cat, payments, checkout.Config{
		LockTimeout: cfg.LockTimeout, FinishTimeout: cfg.FinishTimeout, Hooks: hooks, Metrics: m, Log: cfg.Log,
		ProviderKeyWindow: cfg.ProviderKeyWindow, AuthenticationWindow: cfg.AuthenticationWindow, Answers: rememberAnswers(cfg.RememberedAnswers),
		AnswersFor: rememberFor, KeyRetention: cfg.KeyRetention, Tracing: tp,
	})
	completer := checkout.NewCompleter(engine, payments, checkout.CompleterConfig{
		Grace: cfg.CompleterGrace, MaxAttempts: cfg.MaxSettleAttempts,
	})
	reconciler := lifecycle.NewReconciler(d, payments,
		lifecycle.ReconcilerConfig{Hooks: cfg.ReconcilerHooks, LostAfter: cfg.LockTimeout, Tracing: tp}, m, cfg.Log)
	sweeper := lifecycle.NewSweeper(d, lifecycle.SweeperConfig{Retention: cfg.KeyRetention}, m, cfg.Log)

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	useMiddleware(e, cfg.Log, m)

	keys := idem.NewStore(pool, idem.Options{Kind: pickup.KeyKind, Lease: cfg.LockTimeout,
		Answers: rememberAnswers(cfg.RememberedAnswers), AnswersFor: rememberFor, Retention: cfg.KeyRetention})
	ready := newReadiness(d, payments, cfg)
	refunds := refund.New(d, payments, refund.Config{Lease: cfg.LockTimeout, CancelWindow: cfg.CancelWindow, Retention: cfg.KeyRetention,
		Hooks: cfg.RefundHooks},
		map[string]refund.Answer{api.Channel: api.RefundAnswer, handlers.Channel: handlers.CancelAnswer, OperatorChannel: operatorRefundAnswer})
	webhooks := stripehook.New(d, payments, cfg.StripeWebhookSecret, m, cfg.Log)
	webhooks.Settle = completer.SettleKey
	register(e, d, cfg, routes{engine: engine, completer: completer, catalog: cat, demo: demo, keys: keys, metrics: m,
		ready: ready, webhooks: webhooks, refunds: refunds})

	a := &App{
		Echo: e, DB: d, Checkout: engine, Payments: payments,
		Metrics: m, Completer: completer, Sweeper: sweeper, Reconciler: reconciler, demo: demo, Demo: cfg.Demo, Keys: keys, Readiness: ready, Refunds: refunds, refundKeys: newRefundKeys(cfg),
		Tracing: cfg.Tracing, cfg: cfg, deploymentErr: deploymentErr,
	}
	// The shop's listener serves strangers: each request starts a trace of
	// its own, linked to the caller's.
	a.handler = tracing.Server(e, tp, nil)
	if cfg.Jobs.Log == nil {
		cfg.Jobs.Log = cfg.Log
	}
	if cfg.Jobs.Tracing == nil {
		cfg.Jobs.Tracing = tp
	}
	if pool != nil {
		a.Jobs, a.jobsErr = newJobClient(pool, cfg.Jobs, true)
	}
	return a
}

// Handler is what serves the shop's listener: Echo, with each request a
// server span of its own trace (tracing.Server) that the routes' middleware
// names by its route template.
func (a *App) Handler() http.Handler { return a.handler }

// bothHooks runs first, then second, each when there is one.
func bothHooks(first, second func(context.Context, checkout.Claimed)) func(context.Context, checkout.Claimed) {
	if first == nil {
		return second
	}
	if second == nil {
		return first
	}
	return func(ctx context.Context, c checkout.Claimed) {
		first(ctx, c)
		second(ctx, c)
	}
}

// bothErrHooks runs first, then second, each when there is one, stopping at the
// first error.
func bothErrHooks[T any](first, second func(context.Context, T) error) func(context.Context, T) error {
	if first == nil {
		return second
	}
	if second == nil {
		return first
	}
	return func(ctx context.Context, v T) error {
		if err := first(ctx, v); err != nil {
			return err
		}
		return second(ctx, v)
	}
}

// hostOf is the host:port of a URL, as a Host header names it.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Host
}
