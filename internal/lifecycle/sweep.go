package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/metrics"
)

// eventsKeptFor is how many retention windows an audit event is kept: a
// key's history stays readable for a full window after the key has expired.
const eventsKeptFor = 2

// SweeperConfig tunes a Sweeper.
type SweeperConfig struct {
	// Retention is how long a key is kept after its creation. Finished keys
	// older than that are deleted; the same key then starts a new operation.
	Retention time.Duration
	// Batch bounds the rows one transaction deletes, so that a backlog never
	// holds locks for long nor makes one huge transaction.
	Batch int
}

// Sweeper deletes expired finished keys, and audit events past their own
// retention, in bounded batches. It never deletes a started key: its outcome
// is not known yet, and the completer or a retry settles it first.
type Sweeper struct {
	db      *database.DB
	cfg     SweeperConfig
	metrics *metrics.Metrics
	log     *slog.Logger
}

// NewSweeper returns a sweeper. A nil m counts into a registry nobody reads.
func NewSweeper(d *database.DB, cfg SweeperConfig, m *metrics.Metrics, log *slog.Logger) *Sweeper {
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	if m == nil {
		m = metrics.New()
	}
	return &Sweeper{db: d, cfg: cfg, metrics: m, log: log}
}

// Swept is what one pass did.
type Swept struct {
	Keys, Events int64
	// KeyBatches and EventBatches count the transactions that deleted
	// keys and events, the last of each finding fewer than a batch.
	KeyBatches, EventBatches int
	// Busy means another instance was sweeping, so this pass stopped.
	Busy bool
}

// Pass deletes everything expired, a batch per transaction, until a batch
// comes back short. Each batch first takes a transaction-level advisory
// lock: while one instance sweeps the others find it taken and stop, and a
// crashed sweeper's lock goes with its transaction.
func (s *Sweeper) Pass(ctx context.Context) (Swept, error) {
	var sw Swept
	steps := []struct {
		what    string
		delete  func(ctx context.Context, q *db.Queries) (int64, error)
		total   *int64
		batches *int
		count   func(float64)
	}{
		{"keys", func(ctx context.Context, q *db.Queries) (int64, error) {
			return q.SweepKeys(ctx, db.SweepKeysParams{Retention: s.cfg.Retention, BatchSize: int32(s.cfg.Batch)})
		}, &sw.Keys, &sw.KeyBatches, s.metrics.SweptKeys.Add},
		{"events", func(ctx context.Context, q *db.Queries) (int64, error) {
			return q.SweepKeyEvents(ctx, db.SweepKeyEventsParams{Keep: eventsKeptFor * s.cfg.Retention, BatchSize: int32(s.cfg.Batch)})
		}, &sw.Events, &sw.EventBatches, s.metrics.SweptEvents.Add},
	}
	for _, step := range steps {
		for {
			if err := ctx.Err(); err != nil {
				return sw, err
			}
			var n int64
			err := s.db.InTx(ctx, func(q *db.Queries) error {
				locked, err := q.TrySweepLock(ctx)
				if err != nil {
					return err
				}
				if !locked {
					sw.Busy = true
					return nil
				}
				n, err = step.delete(ctx, q)
				return err
			})
			if err != nil {
				return sw, fmt.Errorf("sweep %s: %w", step.what, err)
			}
			if sw.Busy {
				s.log.DebugContext(ctx, "sweeper: another instance is sweeping")
				return sw, nil
			}
			*step.batches++
			*step.total += n
			step.count(float64(n))
			if n < int64(s.cfg.Batch) {
				break
			}
		}
	}
	if sw.Keys+sw.Events > 0 {
		s.log.InfoContext(ctx, "sweeper: deleted expired rows", "keys", sw.Keys, "events", sw.Events,
			"retention", s.cfg.Retention)
	}
	return sw, nil
}
