package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/internal/catalog"
	"exactlyonce/internal/config"
	"exactlyonce/internal/database"
	"exactlyonce/internal/lifecycle"
	"exactlyonce/internal/logging"
	"exactlyonce/internal/mail"
	"exactlyonce/internal/tracing"
	"exactlyonce/internal/web"
)

// Main runs the shop's binary with args (none: serve; sweep; worker;
// unpark SCOPE KEY; stock [receive SKU N]),
// configured from the environment, until ctx ends: configuration →
// tracing → pool → migrations → application → serve → graceful shutdown.
// cmd/web runs it alone; demo/cmd/demo with the double-click lab mounted
// (demo), which DEMO=1 asks for and only that binary links.
func Main(ctx context.Context, args []string, demo Demo) error {
	mode := ""
	if len(args) > 0 {
		mode = args[0]
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if cfg.Demo && demo == nil {
		return fmt.Errorf("DEMO=1 asks for the double-click lab, which this binary does not link: run the demo's (make run, demo/cmd/demo)")
	}
	if !cfg.Demo {
		demo = nil // the demo's binary with DEMO=0 is the shop alone
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
		cfg.Tracing.ServiceName = "exactlyonce" + map[string]string{"sweep": "-sweep", "worker": "-worker"}[mode]
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

	switch mode {
	case "unpark":
		return unpark(ctx, pool, args[1:], log)
	case "stock":
		return stock(ctx, pool, args[1:], os.Stdout)
	case "sweep":
		sw, err := lifecycle.NewSweeper(database.New(pool), lifecycle.SweeperConfig{Retention: cfg.KeyRetention}, nil, log).Pass(ctx)
		log.Info("sweep", "keys", sw.Keys, "events", sw.Events, "another_instance_sweeping", sw.Busy)
		return err
	case "":
		if err := cfg.CheckProvider(); err != nil {
			return err
		}
	case "worker":
	default:
		return fmt.Errorf("unknown command %q: want none (serve), sweep, worker, unpark or stock", mode)
	}

	jobsPool, err := database.OpenBeside(ctx, pool, int32(cfg.JobsDBMaxConns))
	if err != nil {
		return err
	}
	defer jobsPool.Close()
	jobs := JobsConfig{SMTPAddr: cfg.SMTPAddr, Mail: mail.Config{From: cfg.MailFrom}, RescueAfter: cfg.JobRescueAfter,
		Log: log, Pool: jobsPool, Tracing: tr.Provider}
	if mode == "worker" {
		log.Info("working the outbox's jobs", "smtp", cfg.SMTPAddr)
		return RunJobs(ctx, pool, jobs)
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// Listening before the app is built, so that the key inspector knows
	// where the admin listener's traces are.
	var adminLn net.Listener
	if cfg.AdminAddr != "" {
		if adminLn, err = net.Listen("tcp", cfg.AdminAddr); err != nil {
			return fmt.Errorf("listen on ADMIN_ADDR: %w", err)
		}
	}
	remembered := cfg.RememberedAnswers
	if remembered == 0 {
		remembered = -1 // REMEMBERED_ANSWERS=0: none (app's zero is its default)
	}
	a := New(pool, Config{
		BaseURL: "http://" + ln.Addr().String(), LockTimeout: cfg.LockTimeout, ProviderTimeout: cfg.ProviderTimeout,
		Demo: demo, Log: log, KeyRetention: cfg.KeyRetention, CompleterGrace: cfg.CompleterGrace,
		AuthenticationWindow: cfg.AuthenticationWindow, CancelWindow: cfg.CancelWindow,
		CompleterInterval: cfg.CompleterInterval, SweepInterval: cfg.SweepInterval, SessionSecret: cfg.SessionSecret,
		AllowedHosts:  cfg.AllowedHosts,
		CustomerQuota: web.CustomerQuota{PerMinute: cfg.CustomersPerMinute, Burst: cfg.CustomerBurst},
		WriteLimits: web.WriteLimits{
			PerCustomerPerMinute: cfg.WritesPerMinute, PerCustomerBurst: cfg.WriteBurst,
			PerAddressPerMinute: cfg.AddressWritesPerMinute, PerAddressBurst: cfg.AddressWriteBurst,
			DeclinesPerHour: cfg.DeclinesPerHour, DeclineBurst: cfg.DeclineBurst, InFlight: cfg.WritesInFlight,
			AddressInFlight: cfg.AddressWritesInFlight,
		},
		RememberedAnswers: remembered, ReconcileInterval: cfg.ReconcileInterval,
		StripeAPIBase: cfg.StripeAPIBase, StripeSecretKey: cfg.StripeSecretKey, StripeWebhookSecret: cfg.StripeWebhookSecret,
		RunJobs: cfg.RunJobs, Jobs: jobs, AdminHosts: cfg.AdminHosts, AdminToken: cfg.AdminToken,
		AdminURL: listenerURL(adminLn), MailCatcherURL: cfg.MailCatcherURL, Tracing: tr,
	})
	if adminLn != nil {
		go func() {
			if err := a.ServeAdmin(ctx, adminLn); err != nil {
				log.Error("admin server stopped", "err", err)
			}
		}()
		log.Info("serving metrics, pprof, traces (/traces) and River UI (/riverui/)", "url", listenerURL(adminLn))
	}
	log.Info("serving", "url", "http://"+ln.Addr().String(), "demo", cfg.Demo, "lock_timeout", cfg.LockTimeout,
		"key_retention", cfg.KeyRetention, "provider", cfg.StripeAPIBase)
	return a.Serve(ctx, ln, cfg.ShutdownTimeout)
}

// openDatabase connects to DATABASE_URL, migrates (through
// MIGRATE_DATABASE_URL when set: goose's session-level advisory lock needs
// a direct connection, which PgBouncer in transaction pooling is not), seeds
// the catalog and checks durability. With tracing on, each statement is a
// span of the trace it runs in.
func openDatabase(ctx context.Context, cfg config.Config, tr *tracing.Tracing, log *slog.Logger) (*pgxpool.Pool, error) {
	opts := database.PoolOptions{MaxConns: int32(cfg.DBMaxConns), QueryMode: cfg.DBQueryMode}
	if !cfg.Tracing.Off {
		opts.Tracing = tr.Provider
	}
	pool, err := database.OpenWith(ctx, cfg.DatabaseURL, opts)
	if err != nil {
		return nil, err
	}
	migrateOn := pool
	if cfg.MigrateDatabaseURL != "" {
		direct, err := database.OpenWith(ctx, cfg.MigrateDatabaseURL, database.PoolOptions{MaxConns: 2})
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("MIGRATE_DATABASE_URL: %w", err)
		}
		defer direct.Close()
		migrateOn = direct
	}
	d := database.New(pool)
	if err := database.Migrate(ctx, migrateOn); err != nil {
		pool.Close()
		return nil, err
	}
	if err := catalog.Seed(ctx, d.Queries); err != nil {
		pool.Close()
		return nil, err
	}
	if err := CheckDurability(ctx, d, cfg.RequireSyncReplica, log); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
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

func listenerURL(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return "http://" + ln.Addr().String()
}

const (
	// tracingShutdown bounds the export of the last spans at exit.
	tracingShutdown = 5 * time.Second
	// logFlushEvery is the longest an info line waits in the log's buffer.
	logFlushEvery = 200 * time.Millisecond
)
