package loyalty

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/outbox"
)

// Hooks are test and lab signals in the worker's one transaction.
type Hooks struct {
	// AfterAward runs after the ledger insert and before the job is marked
	// completed, in the same transaction. An error there stands for the
	// worker dying at that point: the transaction rolls back, and River
	// delivers the job again.
	AfterAward func(ctx context.Context, job *river.Job[outbox.LoyaltyArgs]) error
}

// Worker awards an order's points.
type Worker struct {
	river.WorkerDefaults[outbox.LoyaltyArgs]
	db    *database.DB
	hooks Hooks
}

// NewWorker returns the loyalty consumer.
func NewWorker(d *database.DB, hooks Hooks) *Worker {
	return &Worker{db: d, hooks: hooks}
}

// Work inserts the order's ledger row, if it is not there yet, and marks
// the job completed, in one transaction.
func (w *Worker) Work(ctx context.Context, job *river.Job[outbox.LoyaltyArgs]) error {
	return w.db.InJobTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if _, err := q.AwardPoints(ctx, db.AwardPointsParams{
			CustomerID: job.Args.CustomerID, OrderID: job.Args.OrderID, JobID: job.ID,
		}); err != nil {
			return fmt.Errorf("award points: %w", err)
		}
		if w.hooks.AfterAward != nil {
			if err := w.hooks.AfterAward(ctx, job); err != nil {
				return err
			}
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("complete loyalty job: %w", err)
		}
		return nil
	})
}
