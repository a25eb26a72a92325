package mail

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	gomail "github.com/wneessen/go-mail"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/outbox"
	"exactlyonce/views"
)

// RefundWorker sends the mail of a refund. A refund has one job (the
// finish of its key inserts it once), so, unlike the order's confirmation,
// no second job of the same mail can race this one: River runs a job one
// attempt at a time, and an attempt ends (jobTimeout) before River would
// rescue it. The one window left is the confirmation's: a worker that dies
// after the SMTP server accepted the mail and before the record commits
// sends it again, with the same Message-ID.
type RefundWorker struct {
	river.WorkerDefaults[outbox.RefundMailArgs]
	db     *database.DB
	sender Sender
	cfg    Config
}

// NewRefundWorker returns the refund mail consumer.
func NewRefundWorker(d *database.DB, sender Sender, cfg Config) *RefundWorker {
	w := NewWorker(d, sender, cfg, Hooks{})
	return &RefundWorker{db: d, sender: sender, cfg: w.cfg}
}

// Timeout bounds one attempt of the job.
func (w *RefundWorker) Timeout(*river.Job[outbox.RefundMailArgs]) time.Duration { return jobTimeout }

// RefundMessageID is the refund mail's Message-ID: the same for every send.
func RefundMessageID(domain string, refundID uuid.UUID) string {
	return fmt.Sprintf("order-refunded.%s@%s", refundID, domain)
}

// Work sends the refund's mail unless it is recorded, then records it and
// completes the job in one transaction.
func (w *RefundWorker) Work(ctx context.Context, job *river.Job[outbox.RefundMailArgs]) error {
	r, err := w.db.RefundForMail(ctx, db.RefundForMailParams{CustomerID: job.Args.CustomerID, RefundID: job.Args.RefundID})
	if err != nil {
		return fmt.Errorf("refund for mail: %w", err)
	}
	if !r.Sent {
		msg, err := refundMail(w.cfg, r)
		if err != nil {
			return err
		}
		if err := w.sender.Send(ctx, msg); err != nil {
			return err
		}
	}
	return w.db.InJobTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if _, err := q.RecordRefundMail(ctx, db.RecordRefundMailParams{RefundID: r.ID,
			MessageID: RefundMessageID(w.cfg.Domain, r.ID), Recipient: recipient(w.cfg.Domain, r.CustomerID),
			JobID: job.ID, Attempt: int32(job.Attempt)}); err != nil {
			return fmt.Errorf("record refund mail: %w", err)
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("complete refund mail job: %w", err)
		}
		return nil
	})
}

// refundMail composes the mail of a refund.
func refundMail(cfg Config, r db.RefundForMailRow) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	if err := m.From(cfg.From); err != nil {
		return nil, fmt.Errorf("from: %w", err)
	}
	if err := m.To(recipient(cfg.Domain, r.CustomerID)); err != nil {
		return nil, fmt.Errorf("to: %w", err)
	}
	m.SetMessageIDWithValue(RefundMessageID(cfg.Domain, r.ID))
	if r.EndedAt != nil {
		m.SetDateWithValue(*r.EndedAt)
	}
	var b strings.Builder
	if r.Kind == "cancel" {
		m.Subject("Your order " + r.OrderID.String() + " is cancelled")
		fmt.Fprintf(&b, "Your order %s is cancelled.\n\n", r.OrderID)
	} else {
		m.Subject("A refund for your order " + r.OrderID.String())
		fmt.Fprintf(&b, "We refunded part of your order %s.\n\n", r.OrderID)
	}
	fmt.Fprintf(&b, "Refunded: %s (of %s paid).\n", views.FormatMoney(r.Amount, r.Currency), views.FormatMoney(r.OrderAmount, r.Currency))
	m.SetBodyString(gomail.TypeTextPlain, b.String())
	return m, nil
}
