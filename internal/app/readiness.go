package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"exactlyonce/internal/database"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/readiness"
)

// readyTimeout bounds the whole readiness report: a probe that hangs is
// worse than one that says no.
const readyTimeout = 2 * time.Second

// jobsStale is how long a job may wait for a worker before readiness
// reports the jobs as failing: workers poll every second or so, and a job
// that waits a minute has no worker taking it.
const jobsStale = time.Minute

// newReadiness is what GET /readyz checks, on both listeners. The
// database, its migrations and its role gate (the instance can do nothing
// without them); the provider and the jobs are reported only (see package
// readiness).
func newReadiness(d *database.DB, payments *payment.Client, cfg Config) *readiness.Checker {
	inProcess := cfg.ProviderURL == ""
	workers := "worked by another process (web worker)"
	if cfg.RunJobs {
		workers = "worked in this process"
	}
	return readiness.New(readyTimeout, cfg.Log,
		readiness.Check{Name: "database", Gates: true, Run: func(ctx context.Context) (string, error) {
			if err := d.Pool.Ping(ctx); err != nil {
				return "database unreachable", err
			}
			return "answers", nil
		}},
		readiness.Check{Name: "migrations", Gates: true, After: "database", Run: func(ctx context.Context) (string, error) {
			switch err := d.Ready(ctx); {
			case errors.Is(err, database.ErrMigrationsPending):
				return "migrations pending", err
			case err != nil:
				return "migrations unreadable", err
			}
			return "all applied", nil
		}},
		readiness.Check{Name: "replication", Gates: true, After: "database", Run: func(ctx context.Context) (string, error) {
			r, err := d.ReplicationState(ctx)
			switch {
			case err != nil:
				return "replication state unreadable", err
			case r.InRecovery:
				return "database is a standby (read-only)", errors.New("pg_is_in_recovery() is true")
			}
			return fmt.Sprintf("primary, %d standbys streaming", r.Standbys), nil
		}},
		readiness.Check{Name: "provider", Run: func(ctx context.Context) (string, error) {
			// Listing one charge is an authenticated read: it answers only
			// when the provider is up and takes this shop's secret.
			if _, err := payments.ListCharges(ctx, "", 1); err != nil {
				if _, ok := errors.AsType[*payment.UnavailableError](err); ok {
					return "provider unreachable", err
				}
				return "provider refused", err
			}
			if inProcess {
				return "answers (in this process)", nil
			}
			return "answers", nil
		}},
		readiness.Check{Name: "jobs", After: "database", Run: func(ctx context.Context) (string, error) {
			wait, err := d.OldestWaitingJob(ctx)
			switch {
			case err != nil:
				return "jobs unreadable", err
			case wait > jobsStale:
				return fmt.Sprintf("a job has waited %.0f s for a worker; %s", wait.Seconds(), workers),
					fmt.Errorf("oldest waiting job %s", wait)
			}
			return fmt.Sprintf("oldest waiting job %.1f s; %s", wait.Seconds(), workers), nil
		}},
	)
}
