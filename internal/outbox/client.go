package outbox

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// ClientConfig is how the River client runs.
type ClientConfig struct {
	// Workers are the consumers; nil makes a client that only reads and
	// inserts jobs (the jobs view), working none.
	Workers *river.Workers
	// MaxWorkers is how many jobs this process works at once; zero means
	// 16. The jobs wait on the database and the mail server far more than
	// they compute, and each fetch takes at most this many: with 4, the
	// load test's new orders (500 a second) left a backlog that took
	// minutes to work off.
	MaxWorkers int
	// FetchPollInterval is how often an idle worker looks for new jobs;
	// zero means 100 ms (one small query ten times a second when idle).
	// FinishOrder inserts jobs with SQL and sends no notification, so this
	// is how soon a new order's jobs start.
	FetchPollInterval time.Duration
	// RescueAfter is how long a job may stay running before River takes it
	// for dead (its worker crashed) and delivers it again, at the rescuer's
	// next pass (RescuerInterval); zero means one minute. A run of a job is
	// cut off at half of it (at most 30 s), so a job is never rescued while
	// its worker still runs it.
	RescueAfter time.Duration
	Log         *slog.Logger
	// Tracing, when set, makes each run of a job a trace of its own
	// (River's OpenTelemetry middleware, otelriver): river.work/<kind>,
	// linked to the finish that enqueued the job by the traceparent
	// FinishOrder puts in its metadata, with the job's statements inside.
	Tracing trace.TracerProvider
}

// RescuerInterval is how often River's rescuer, on the elected leader,
// looks for jobs left running (River's JobRescuerIntervalDefault, which a
// client cannot set): a job whose worker died is delivered again between
// RescueAfter and RescueAfter + RescuerInterval after its run began.
const RescuerInterval = 30 * time.Second

// maxJobTimeout bounds one run of a job.
const maxJobTimeout = 30 * time.Second

// NewClient returns the River client on pool. It runs in poll-only mode:
// no LISTEN connection, which a transaction pooler such as PgBouncer would
// not keep, and FinishOrder's SQL insert sends no notification anyway.
func NewClient(pool *pgxpool.Pool, cfg ClientConfig) (*river.Client[pgx.Tx], error) {
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = 16
	}
	if cfg.FetchPollInterval <= 0 {
		cfg.FetchPollInterval = 100 * time.Millisecond
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = time.Minute
	}
	rc := &river.Config{
		Logger:               cfg.Log,
		PollOnly:             true,
		JobTimeout:           min(maxJobTimeout, cfg.RescueAfter/2),
		RescueStuckJobsAfter: cfg.RescueAfter,
		FetchPollInterval:    cfg.FetchPollInterval,
		FetchCooldown:        min(cfg.FetchPollInterval, 20*time.Millisecond),
	}
	if cfg.Tracing != nil {
		rc.Middleware = []rivertype.Middleware{otelriver.NewMiddleware(&otelriver.MiddlewareConfig{
			TracerProvider: cfg.Tracing, MeterProvider: metricnoop.NewMeterProvider(),
			EnableTracePropagation: true, EnableWorkSpanJobKindSuffix: true,
		})}
	}
	if cfg.Workers != nil {
		rc.Workers = cfg.Workers
		rc.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.MaxWorkers}}
	}
	client, err := river.NewClient(riverpgxv5.New(pool), rc)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return client, nil
}
