package mail

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	gomail "github.com/wneessen/go-mail"

	"exactlyonce/internal/database"
	"exactlyonce/internal/db"
	"exactlyonce/internal/outbox"
)

// Sender delivers a message; *SMTP is the one production uses.
type Sender interface {
	Send(ctx context.Context, msg *gomail.Msg) error
}

// Hooks are test and lab signals.
type Hooks struct {
	// AfterSend runs after the SMTP server accepted the mail and before it
	// is recorded and the job completed. An error there stands for the
	// worker dying at that point: nothing is recorded, and River delivers
	// the job again, which sends again with the same Message-ID.
	AfterSend func(ctx context.Context, job *river.Job[outbox.MailArgs]) error
}

// Config is what the mail says about its sender.
type Config struct {
	// From is the sender address, such as shop@exactlyonce.test.
	From string
	// Domain names the host part of Message-IDs and of the demo customers'
	// addresses (customers have no address of their own yet).
	Domain string
}

// Worker sends an order's confirmation.
type Worker struct {
	river.WorkerDefaults[outbox.MailArgs]
	db     *database.DB
	sender Sender
	cfg    Config
	hooks  Hooks
}

// NewWorker returns the mail consumer.
func NewWorker(d *database.DB, sender Sender, cfg Config, hooks Hooks) *Worker {
	if cfg.From == "" {
		cfg.From = "shop@exactlyonce.test"
	}
	if cfg.Domain == "" {
		cfg.Domain = "exactlyonce.test"
	}
	return &Worker{db: d, sender: sender, cfg: cfg, hooks: hooks}
}

// Work sends the order's confirmation unless its sending is recorded, then
// records it and completes the job, in one transaction that holds the
// order's mail lock throughout, so that two jobs for one order never both
// send.
func (w *Worker) Work(ctx context.Context, job *river.Job[outbox.MailArgs]) error {
	args := job.Args.OrderPlaced
	return w.db.InJobTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if err := q.LockOrderMail(ctx, args.OrderID); err != nil {
			return fmt.Errorf("lock order mail: %w", err)
		}
		sent, err := q.MailSent(ctx, db.MailSentParams{CustomerID: args.CustomerID, OrderID: args.OrderID})
		if err != nil {
			return fmt.Errorf("mail sent: %w", err)
		}
		if !sent {
			if err := w.send(ctx, q, job); err != nil {
				return err
			}
		}
		if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
			return fmt.Errorf("complete mail job: %w", err)
		}
		return nil
	})
}

func (w *Worker) send(ctx context.Context, q *db.Queries, job *river.Job[outbox.MailArgs]) error {
	args := job.Args.OrderPlaced
	order, err := q.OrderForMail(ctx, db.OrderForMailParams{CustomerID: args.CustomerID, ID: args.OrderID})
	if err != nil {
		return fmt.Errorf("order for mail: %w", err)
	}
	msg, err := confirmation(w.cfg, order)
	if err != nil {
		return err
	}
	if err := w.sender.Send(ctx, msg); err != nil {
		return err
	}
	if w.hooks.AfterSend != nil {
		if err := w.hooks.AfterSend(ctx, job); err != nil {
			return err
		}
	}
	if _, err := q.RecordSentMail(ctx, db.RecordSentMailParams{
		CustomerID: args.CustomerID, OrderID: args.OrderID, MessageID: MessageID(w.cfg.Domain, args.OrderID),
		Recipient: recipient(w.cfg.Domain, args.CustomerID), JobID: job.ID, Attempt: int32(job.Attempt),
	}); err != nil {
		return fmt.Errorf("record sent mail: %w", err)
	}
	return nil
}
