// Command web serves the shop: the browser checkout, the JSON API and the
// fake payment provider, on one address, with the background completer,
// sweeper and reconciler. It only wires parts together; see package app for what is wired.
//
// `web sweep` runs one pass of the sweeper and exits, for cron.
//
// `web worker` works the outbox's jobs (loyalty points, confirmation mail)
// and serves nothing; run the web processes with RUN_JOBS=0 then.
//
// `web provider` serves only the fake Stripe, on PROVIDER_ADDR, for shops
// started with STRIPE_API_BASE pointing at it: the provider as a process of
// its own, on its own DATABASE_URL, sending its webhooks to
// STRIPE_WEBHOOK_URL.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/internal/app"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/config"
	"exactlyonce/internal/database"
	"exactlyonce/internal/fakestripe"
	"exactlyonce/internal/lifecycle"
	"exactlyonce/internal/localpg"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/mail"
	"exactlyonce/internal/mailcatcher"
	"exactlyonce/internal/tracing"
	"exactlyonce/internal/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "web:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	// Lines are written in batches (a write per line cost a quarter of a
	// replay's CPU); warnings and errors go out at once. Deferred first, so
	// the last lines are flushed after everything else has stopped.
	out := logging.Buffered(os.Stderr, logFlushEvery)
	defer out.Stop()
	log := logging.New(out, cfg.LogFormat, cfg.LogLevel)

	// The tracer provider comes before everything that makes spans (the
	// pool's statements among them) and, deferred now, shuts down after
	// them, exporting the last batch.
	if cfg.Tracing.ServiceName == "" {
		cfg.Tracing.ServiceName = serviceName(args)
	}
	tr, err := tracing.New(ctx, cfg.Tracing)
	if err != nil {
		return err
	}
	defer shutDownTracing(tr, log)

	pool, err := openDatabase(ctx, cfg, tr, log)
	if err != nil {
		return err
	}
	// Deferred first, so it runs last: after Serve has stopped the server
	// and the background workers.
	defer pool.Close()

	if len(args) > 0 && args[0] == "sweep" {
		sweeper := lifecycle.NewSweeper(database.New(pool), lifecycle.SweeperConfig{Retention: cfg.KeyRetention}, nil, log)
		sw, err := sweeper.Pass(ctx)
		log.Info("sweep", "keys", sw.Keys, "events", sw.Events, "another_instance_sweeping", sw.Busy)
		return err
	}

	jobsPool, err := database.OpenBeside(ctx, pool, int32(cfg.JobsDBMaxConns))
	if err != nil {
		return err
	}
	defer jobsPool.Close()
	jobs := app.JobsConfig{SMTPAddr: cfg.SMTPAddr, Mail: mail.Config{From: cfg.MailFrom}, RescueAfter: cfg.JobRescueAfter,
		Log: log, Pool: jobsPool, Tracing: tr.Provider}
	if len(args) > 0 && args[0] == "worker" {
		log.Info("working the outbox's jobs", "smtp", cfg.SMTPAddr)
		return app.RunJobs(ctx, pool, jobs)
	}

	if len(args) > 0 && args[0] == "provider" {
		return serveProvider(ctx, cfg, pool, tr, log)
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// The in-process provider gets a loopback port of its own, so that it
	// outlives the shop's listener at shutdown (see app.Serve).
	var providerLn net.Listener
	if cfg.StripeAPIBase == "" {
		// The fake keeps its state in a schema of its own, which it applies.
		if err := fakestripe.Migrate(ctx, pool); err != nil {
			return err
		}
		if providerLn, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return fmt.Errorf("listen for the in-process provider: %w", err)
		}
	}
	var catcher *mailcatcher.Server
	if cfg.MailCatcher != "" {
		if catcher, jobs.SMTPAddr, err = startMailCatcher(cfg.MailCatcher, cfg.SMTPAddr); err != nil {
			return err
		}
		defer catcher.Close()
		catcher.SetLimit(demoMailKept)
		log.Info("catching mail (demo)", "smtp", catcher.Addr(), "confirmations_to", jobs.SMTPAddr)
		fmt.Fprintf(os.Stderr, "mail catcher (demo): SMTP on %s, caught mail at /mail on ADMIN_ADDR\n", catcher.Addr())
	}
	remembered := cfg.RememberedAnswers
	if remembered == 0 {
		remembered = -1 // REMEMBERED_ANSWERS=0: none (app's zero is its default)
	}
	// Listening before the app is built, so that the key inspector knows
	// where the admin listener's traces are.
	var adminLn net.Listener
	if cfg.AdminAddr != "" {
		if adminLn, err = net.Listen("tcp", cfg.AdminAddr); err != nil {
			return fmt.Errorf("listen on ADMIN_ADDR: %w", err)
		}
	}
	a := app.New(pool, app.Config{
		BaseURL:         "http://" + ln.Addr().String(),
		LockTimeout:     cfg.LockTimeout,
		ProviderTimeout: cfg.ProviderTimeout,
		Demo:            cfg.Demo,
		Log:             log,

		KeyRetention:      cfg.KeyRetention,
		CompleterGrace:    cfg.CompleterGrace,
		CompleterInterval: cfg.CompleterInterval,
		SweepInterval:     cfg.SweepInterval,
		SessionSecret:     cfg.SessionSecret,
		AllowedHosts:      cfg.AllowedHosts,
		CustomerQuota:     web.CustomerQuota{PerMinute: cfg.CustomersPerMinute, Burst: cfg.CustomerBurst},
		WriteLimits: web.WriteLimits{
			PerCustomerPerMinute: cfg.WritesPerMinute, PerCustomerBurst: cfg.WriteBurst,
			PerAddressPerMinute: cfg.AddressWritesPerMinute, PerAddressBurst: cfg.AddressWriteBurst,
			DeclinesPerHour: cfg.DeclinesPerHour, DeclineBurst: cfg.DeclineBurst, InFlight: cfg.WritesInFlight,
			AddressInFlight: cfg.AddressWritesInFlight,
		},
		RememberedAnswers: remembered,
		ReconcileInterval: cfg.ReconcileInterval,

		StripeAPIBase:       cfg.StripeAPIBase,
		StripeSecretKey:     cfg.StripeSecretKey,
		StripeWebhookSecret: cfg.StripeWebhookSecret,
		ProviderListener:    providerLn,

		RunJobs:     cfg.RunJobs,
		Jobs:        jobs,
		MailCatcher: catcher,
		AdminHosts:  cfg.AdminHosts,
		AdminToken:  cfg.AdminToken,
		AdminURL:    listenerURL(adminLn),
		Tracing:     tr,
	})
	if adminLn != nil {
		go func() {
			if err := a.ServeAdmin(ctx, adminLn); err != nil {
				log.Error("admin server stopped", "err", err)
			}
		}()
		log.Info("serving metrics, pprof, traces (/traces), River UI (/riverui/) and caught mail (/mail)", "url", listenerURL(adminLn))
	}
	if cfg.Tracing.Endpoint != "" && !cfg.Tracing.Off {
		log.Info("exporting traces", "otlp_endpoint", cfg.Tracing.Endpoint, "service", cfg.Tracing.ServiceName)
	}
	log.Info("serving", "url", "http://"+ln.Addr().String(), "demo", cfg.Demo, "lock_timeout", cfg.LockTimeout,
		"key_retention", cfg.KeyRetention)
	return a.Serve(ctx, ln, cfg.ShutdownTimeout)
}

// serveProvider is `web provider`.
func serveProvider(ctx context.Context, cfg config.Config, pool *pgxpool.Pool, tr *tracing.Tracing, log *slog.Logger) error {
	h, p, err := app.NewProvider(ctx, pool, app.ProviderConfig{Secret: cfg.StripeSecretKey, Demo: cfg.Demo, Log: log,
		WebhookURL: cfg.StripeWebhookURL, WebhookSecret: cfg.StripeWebhookSecret, Tracing: tr})
	if err != nil {
		return err
	}
	defer p.Close()
	ln, err := net.Listen("tcp", cfg.ProviderAddr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("serving the fake Stripe (STRIPE_API_BASE)", "url", "http://"+ln.Addr().String(), "demo", cfg.Demo,
		"webhooks", cfg.StripeWebhookURL)
	return app.ServeProvider(ctx, h, ln, cfg.ShutdownTimeout)
}

// openDatabase connects to DATABASE_URL, or starts the project-local server
// `make run` uses, then migrates and seeds the catalog. With tracing on,
// each statement is a span of the trace it runs in.
func openDatabase(ctx context.Context, cfg config.Config, tr *tracing.Tracing, log *slog.Logger) (*pgxpool.Pool, error) {
	url := cfg.DatabaseURL
	if url == "" {
		dir, fellBack, err := localpg.UsableDataDir(cfg.LocalDB)
		if err != nil {
			return nil, err
		}
		if fellBack {
			log.Info("the postgres user cannot reach the preferred data folder; using another", "preferred", cfg.LocalDB, "dir", dir)
		}
		srv, err := localpg.Start(ctx, localpg.Options{DataDir: dir})
		if err != nil {
			return nil, err
		}
		log.Info("local PostgreSQL ready", "dir", dir)
		url = srv.URL("postgres")
	}
	opts := database.PoolOptions{MaxConns: int32(cfg.DBMaxConns), QueryMode: cfg.DBQueryMode}
	if !cfg.Tracing.Off {
		opts.Tracing = tr.Provider
	}
	pool, err := database.OpenWith(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, cfg, pool); err != nil {
		pool.Close()
		return nil, err
	}
	if err := catalog.Seed(ctx, database.New(pool).Queries); err != nil {
		pool.Close()
		return nil, err
	}
	if err := app.CheckDurability(ctx, database.New(pool), cfg.RequireSyncReplica, log); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// migrate applies the migrations through pool, or through a direct
// connection of its own when MIGRATE_DATABASE_URL is set: goose's lock is a
// session-level advisory lock, which PgBouncer in transaction pooling would
// not keep on one server connection.
func migrate(ctx context.Context, cfg config.Config, pool *pgxpool.Pool) error {
	if cfg.MigrateDatabaseURL == "" {
		return database.Migrate(ctx, pool)
	}
	direct, err := database.OpenWith(ctx, cfg.MigrateDatabaseURL, database.PoolOptions{MaxConns: 2})
	if err != nil {
		return fmt.Errorf("MIGRATE_DATABASE_URL: %w", err)
	}
	defer direct.Close()
	return database.Migrate(ctx, direct)
}

// serviceName names the process in its spans when OTEL_SERVICE_NAME does
// not: the shop, or which of its commands it runs, so that a collector
// tells the provider's and the workers' spans from the shop's.
func serviceName(args []string) string {
	if len(args) > 0 && (args[0] == "worker" || args[0] == "provider" || args[0] == "sweep") {
		return "exactlyonce-" + args[0]
	}
	return "exactlyonce"
}

// shutDownTracing exports the spans still batched, for up to
// tracingShutdown: a collector that does not answer must not hold the
// process's exit.
func shutDownTracing(tr *tracing.Tracing, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), tracingShutdown)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		log.Warn("tracing: spans not exported at exit", "err", err)
	}
}

// tracingShutdown bounds the export of the last spans at exit.
const tracingShutdown = 5 * time.Second

// listenerURL is the http:// URL of ln, or "" for none.
func listenerURL(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return "http://" + ln.Addr().String()
}

// demoMailKept is how many caught mails the demo's catcher shows: the
// newest, so that a demo left running, or a load test, stays small.
const demoMailKept = 1000

// logFlushEvery is the longest an info line waits in the log's buffer
// (logging.Buffered): short enough to follow a log live, long enough to
// batch thousands of access lines into a few writes.
const logFlushEvery = 200 * time.Millisecond

// startMailCatcher starts the demo's mail catcher on addr (MAIL_CATCHER;
// "auto", make run's default, is a free loopback port, so that nothing
// needs port 1025 and a second shop or a Mailpit holding it is no reason
// to stop) and returns it with where the confirmations go: smtpAddr
// (SMTP_ADDR) when it is set, else the catcher's own address.
func startMailCatcher(addr, smtpAddr string) (*mailcatcher.Server, string, error) {
	if addr == "auto" {
		addr = "127.0.0.1:0"
	}
	c, err := mailcatcher.Listen(addr)
	if err != nil {
		return nil, "", err
	}
	if smtpAddr == "" {
		smtpAddr = c.Addr()
	}
	return c, smtpAddr, nil
}
