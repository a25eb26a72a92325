package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"go.opentelemetry.io/otel/trace"

	"exactlyonce/internal/database"
	"exactlyonce/internal/loyalty"
	"exactlyonce/internal/mail"
	"exactlyonce/internal/outbox"
)

// JobsConfig is what the consumers of the "order placed" event need: where
// to send mail, and the test hooks.
type JobsConfig struct {
	// SMTPAddr is the SMTP server confirmations go to (host:port); empty
	// means DefaultSMTPAddr.
	SMTPAddr string
	Mail     mail.Config
	// PollInterval is how often idle workers look for jobs, and
	// RescueAfter how long a job may run before it is taken for dead and
	// delivered again; zero means outbox's defaults.
	PollInterval time.Duration
	RescueAfter  time.Duration
	LoyaltyHooks loyalty.Hooks
	MailHooks    mail.Hooks
	Log          *slog.Logger
	// Pool, when set, is the jobs' pool of their own (JOBS_DB_MAX_CONNS),
	// beside the one the orders use; nil shares the application's.
	Pool *pgxpool.Pool
	// Tracing makes each run of a job a trace linked to the order's (see
	// outbox.ClientConfig); New fills in the App's, nil makes none.
	Tracing trace.TracerProvider
}

// DefaultSMTPAddr is where mail goes when no SMTP server is configured:
// the port local mail catchers (Mailpit, make run's) listen on.
const DefaultSMTPAddr = "127.0.0.1:1025"

// newJobClient builds the River client that works the outbox's jobs, or,
// when work is false, one that only lists them (the jobs view).
func newJobClient(pool *pgxpool.Pool, cfg JobsConfig, work bool) (*river.Client[pgx.Tx], error) {
	if cfg.Pool != nil {
		pool = cfg.Pool
	}
	oc := outbox.ClientConfig{Log: cfg.Log, FetchPollInterval: cfg.PollInterval, RescueAfter: cfg.RescueAfter,
		Tracing: cfg.Tracing}
	if cfg.SMTPAddr == "" {
		cfg.SMTPAddr = DefaultSMTPAddr
	}
	if work {
		sender, err := mail.NewSMTP(cfg.SMTPAddr, 10*time.Second)
		if err != nil {
			return nil, err
		}
		d := database.New(pool)
		workers := river.NewWorkers()
		river.AddWorker(workers, loyalty.NewWorker(d, cfg.LoyaltyHooks))
		river.AddWorker(workers, mail.NewWorker(d, sender, cfg.Mail, cfg.MailHooks))
		river.AddWorker(workers, loyalty.NewReversalWorker(d))
		river.AddWorker(workers, mail.NewRefundWorker(d, sender, cfg.Mail))
		oc.Workers = workers
	}
	return outbox.NewClient(pool, oc)
}

// jobStopTimeout is how long a stopping client lets the jobs it is working
// finish before cancelling them; a cancelled job is delivered again.
const jobStopTimeout = 5 * time.Second

// stopJobs stops a started client, cancelling the jobs still running after
// jobStopTimeout.
func stopJobs(client *river.Client[pgx.Tx], log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), jobStopTimeout)
	defer cancel()
	if err := client.Stop(ctx); err != nil {
		log.Warn("jobs: stop timed out; cancelling the jobs still running", "err", err)
		if err := client.StopAndCancel(context.Background()); err != nil {
			log.Warn("jobs: stop and cancel", "err", err)
		}
	}
}

// RunJobs is `web worker`: the outbox's consumers in a process of their
// own, until ctx ends.
func RunJobs(ctx context.Context, pool *pgxpool.Pool, cfg JobsConfig) error {
	client, err := newJobClient(pool, cfg, true)
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}
	<-ctx.Done()
	stopJobs(client, cfg.Log)
	return nil
}
