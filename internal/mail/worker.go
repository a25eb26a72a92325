package mail

import (
	"context"
	"fmt"
	"time"

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

// How long a mail job's attempt may run, and how long its claim to send
// (mail_sendings) holds: longer than the attempt, so that the claim of a
// live attempt never runs out under it, and shorter than River's rescue
// (outbox.ClientConfig.RescueAfter, a minute by default), so that a job
// delivered again after its worker died finds the claim its own or run out.
const (
	jobTimeout   = 20 * time.Second
	sendingLease = 30 * time.Second
	// snoozeFor is how long a job waits when another job of its order is
	// sending: about one SMTP exchange, then it looks for the record.
	snoozeFor = 2 * time.Second
)

// Timeout bounds one attempt of the job (see jobTimeout).
func (w *Worker) Timeout(*river.Job[outbox.MailArgs]) time.Duration { return jobTimeout }

// Work sends the order's confirmation unless its sending is recorded, then
// records it and completes the job. It holds no database connection while it
// talks to the SMTP server, so that a slow or stalled mail server cannot take
// the connections orders need:
//
//  1. a short transaction, under the order's mail lock, decides: the mail is
//     recorded already (complete the job), or another job of the order is
//     sending it now (snooze), or this attempt claims the sending;
//  2. the mail is sent, with no transaction open;
//  3. a second transaction records it, drops the claim and completes the job.
//
// A worker that dies between 2 and 3 leaves the mail sent and unrecorded:
// its job, delivered again, sends it again with the same Message-ID. That
// is the one window in which a mail goes out twice (docs/outbox.md).
func (w *Worker) Work(ctx context.Context, job *river.Job[outbox.MailArgs]) error {
	args := job.Args.OrderPlaced
	var (
		order db.OrderForMailRow
		send  bool
	)
	err := w.db.InJobTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if err := q.LockOrderMail(ctx, args.OrderID); err != nil {
			return fmt.Errorf("lock order mail: %w", err)
		}
		var err error
		order, err = q.OrderForMail(ctx, db.OrderForMailParams{CustomerID: args.CustomerID, OrderID: args.OrderID,
			JobID: job.ID, Attempt: int32(job.Attempt), Lease: sendingLease})
		switch {
		case err != nil:
			return fmt.Errorf("order for mail: %w", err)
		case order.Sent:
			return w.complete(ctx, tx, q, job)
		case !order.Claimed:
			return river.JobSnooze(snoozeFor) // another job of the order is sending it
		}
		send = true
		return nil
	})
	if err != nil || !send {
		return err
	}
	if err := w.send(ctx, job, order); err != nil {
		return err
	}
	return w.db.InJobTx(ctx, func(tx pgx.Tx, q *db.Queries) error {
		if err := q.LockOrderMail(ctx, args.OrderID); err != nil {
			return fmt.Errorf("lock order mail: %w", err)
		}
		if _, err := q.RecordSentMail(ctx, db.RecordSentMailParams{
			CustomerID: args.CustomerID, OrderID: args.OrderID, MessageID: MessageID(w.cfg.Domain, args.OrderID),
			Recipient: recipient(w.cfg.Domain, args.CustomerID), JobID: job.ID, Attempt: int32(job.Attempt),
		}); err != nil {
			return fmt.Errorf("record sent mail: %w", err)
		}
		return completeJob(ctx, tx, job) // the record dropped the sending claim
	})
}

// complete drops the order's sending claim and marks the job completed, in
// the transaction that found the mail recorded.
func (w *Worker) complete(ctx context.Context, tx pgx.Tx, q *db.Queries, job *river.Job[outbox.MailArgs]) error {
	args := job.Args.OrderPlaced
	if err := q.EndMailSending(ctx, db.EndMailSendingParams{CustomerID: args.CustomerID, OrderID: args.OrderID}); err != nil {
		return fmt.Errorf("end mail sending: %w", err)
	}
	return completeJob(ctx, tx, job)
}

// completeJob marks the job completed in tx, the transaction of its effect.
func completeJob(ctx context.Context, tx pgx.Tx, job *river.Job[outbox.MailArgs]) error {
	if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil {
		return fmt.Errorf("complete mail job: %w", err)
	}
	return nil
}

// send composes the confirmation and hands it to the SMTP server.
func (w *Worker) send(ctx context.Context, job *river.Job[outbox.MailArgs], order db.OrderForMailRow) error {
	msg, err := confirmation(w.cfg, order)
	if err != nil {
		return err
	}
	if err := w.sender.Send(ctx, msg); err != nil {
		return err
	}
	if w.hooks.AfterSend != nil {
		return w.hooks.AfterSend(ctx, job)
	}
	return nil
}
