package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	inProcess := cfg.StripeAPIBase == ""
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
		// Reported, not gating: taking every instance out of rotation
		// would not make a standby synchronous. Under REQUIRE_SYNC_REPLICA
		// the database refuses keys meanwhile (CheckDurability).
		readiness.Check{Name: "durability", After: "database", Run: func(ctx context.Context) (string, error) {
			r, err := d.ReplicationState(ctx)
			if err != nil {
				return "replication state unreadable", err
			}
			return r.Describe(), durabilityFault(r)
		}},
		readiness.Check{Name: "provider", Run: func(ctx context.Context) (string, error) {
			// Listing one intent is an authenticated read: it answers only
			// when the provider is up and takes this shop's secret key.
			if err := payments.Ping(ctx); err != nil {
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

// durabilityFault is why r could lose a key the shop acknowledged, or why
// it falls short of the database's REQUIRE_SYNC_REPLICA policy, or nil.
func durabilityFault(r database.Replication) error {
	switch {
	case r.Risk() != "":
		return errors.New(r.Risk())
	case r.RequireSync && !r.Synchronous():
		return fmt.Errorf("REQUIRE_SYNC_REPLICA is set and there is no synchronous standby: %s", r.Describe())
	case r.SyncStandbyNames != "" && !r.Synchronous() && r.SynchronousCommit != "local":
		// Every commit waits for a standby that is not there.
		return errors.New(r.Describe())
	}
	return nil
}

// CheckDurability is the start-up's look at the database. With
// requireSync (REQUIRE_SYNC_REPLICA=1) it first turns the database's
// policy on, for every client of the database and until turned off in SQL
// (migrations 00070 and 00140). It logs where the server stands, and warns when a
// failover or a crash could lose a key the shop acknowledged. Under the
// policy and without a synchronous standby it says that writes are refused
// until one confirms commits: the database refuses them, so the shop
// starts and serves reads, pages and replays meanwhile, and takes orders
// again by itself once the standby is back.
func CheckDurability(ctx context.Context, d *database.DB, requireSync bool, log *slog.Logger) error {
	if requireSync {
		if err := d.RequireSyncReplica(ctx); err != nil {
			return fmt.Errorf("REQUIRE_SYNC_REPLICA: turn the database's policy on: %w", err)
		}
	}
	r, err := d.ReplicationState(ctx)
	if err != nil {
		return err
	}
	switch {
	case r.RequireSync && !r.Synchronous():
		log.Error("REQUIRE_SYNC_REPLICA is set and no synchronous standby confirms commits: writes are refused (503) until one does",
			"state", r.Describe())
	case r.Risk() != "":
		log.Warn("the database could lose a key the shop acknowledged; REQUIRE_SYNC_REPLICA=1 refuses such writes",
			"why", r.Risk())
	default:
		log.Info("database durability", "state", r.Describe())
	}
	return nil
}
