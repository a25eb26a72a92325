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

// ReversalWorker takes back the points of what a refund refunded.
type ReversalWorker struct {
	river.WorkerDefaults[outbox.LoyaltyReversalArgs]
	db *database.DB
}

// NewReversalWorker returns the loyalty reversal consumer.
func NewReversalWorker(d *database.DB) *ReversalWorker { return &ReversalWorker{db: d} }

// Work writes the refund's reversal, if it is not there yet, and marks the
// job completed, in one transaction, under the order's reversal lock: the
// reversal is reckoned from the reversals before it (ReversePoints).
func (w *ReversalWorker) Work(ctx context.Context, job *river.Job[outbox.LoyaltyReversalArgs]) error {
	return w.db.InJobTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if err := q.LockOrderPoints(ctx, job.Args.OrderID); err != nil {
			return fmt.Errorf("lock order points: %w", err)
		}
		if _, err := q.ReversePoints(ctx, db.ReversePointsParams{RefundID: job.Args.RefundID, JobID: job.ID}); err != nil {
			return fmt.Errorf("reverse points: %w", err)
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("complete loyalty reversal job: %w", err)
		}
		return nil
	})
}
