package mail_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"exactlyonce/internal/apptest"
	"exactlyonce/internal/checkout"
	"exactlyonce/internal/database"
	"exactlyonce/internal/mail"
	"exactlyonce/internal/outbox"
	"exactlyonce/internal/pgtest"
)

const oneMug = `{"items": [{"sku": "mug-espresso", "quantity": 1}]}`

func placeOrder(t *testing.T, h *apptest.Harness, c apptest.Customer) uuid.UUID {
	t.Helper()
	r := h.PlaceOrder(t, c, "k", oneMug)
	if r.Status != http.StatusCreated {
		t.Fatalf("place order: got %d %s, want 201", r.Status, r.Body)
	}
	var receipt checkout.Receipt
	r.JSON(t, &receipt)
	return receipt.OrderID
}

const mailDone = `SELECT count(*) FROM river_job WHERE kind = 'order_confirmation_mail' AND state = 'completed'`

// The confirmation goes over SMTP to a real listener, with the Message-ID
// derived from the order, and its sending is recorded once.
func TestConfirmationDelivered(t *testing.T) {
	t.Parallel()
	withCatcher, catcher := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher)
	c := h.NewCustomer(t)
	order := placeOrder(t, h, c)
	h.StartJobs(t)
	h.WaitCount(t, 1, mailDone)
	msgs := catcher.Messages()
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if want := "<" + mail.MessageID("exactlyonce.test", order) + ">"; m.MessageID != want {
		t.Errorf("got Message-ID %q, want %q", m.MessageID, want)
	}
	if len(m.To) != 1 || !strings.Contains(m.To[0], c.ID.String()) || !strings.Contains(m.Subject, order.String()) {
		t.Errorf("got To %v, Subject %q; want the customer's address and the order in the subject", m.To, m.Subject)
	}
	if got := h.Count(t, `SELECT count(*) FROM sent_mails WHERE order_id = $1`, order); got != 1 {
		t.Errorf("got %d sent-mail records, want 1", got)
	}
}

// The worker dies after the SMTP server accepted the mail and before its
// record and the job's completion commit: the window this consumer leaves
// at-least-once. The job runs again and sends again, with the same
// Message-ID, and one record is kept.
func TestCrashAfterSendResendsSameMessageID(t *testing.T) {
	t.Parallel()
	withCatcher, catcher := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher, func(c *apptest.Setup) {
		c.Jobs.MailHooks.AfterSend = func(_ context.Context, job *river.Job[outbox.MailArgs]) error {
			if job.Attempt == 1 {
				return errors.New("simulated crash after sending")
			}
			return nil
		}
	})
	c := h.NewCustomer(t)
	order := placeOrder(t, h, c)
	h.StartJobs(t)
	h.WaitCount(t, 1, mailDone)
	msgs := catcher.Messages()
	if len(msgs) != 2 || msgs[0].MessageID != msgs[1].MessageID {
		t.Fatalf("got %d messages (%v), want 2 with one Message-ID", len(msgs), msgs)
	}
	if got := h.Count(t, `SELECT count(*) FROM sent_mails WHERE order_id = $1 AND attempt = 2`, order); got != 1 {
		t.Errorf("got %d sent-mail records of attempt 2, want 1", got)
	}
}

// Duplicate jobs for one order, run at once, send one mail: the order's
// mail lock serialises them and the later ones find the record.
func TestDuplicateJobsSendOnce(t *testing.T) {
	t.Parallel()
	withCatcher, catcher := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher)
	c := h.NewCustomer(t)
	order := placeOrder(t, h, c)
	args := outbox.MailArgs{OrderPlaced: outbox.OrderPlaced{CustomerID: c.ID, OrderID: order}}
	var params []river.InsertManyParams
	for range 4 {
		params = append(params, river.InsertManyParams{Args: args})
	}
	if _, err := h.App.Jobs.InsertMany(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	h.StartJobs(t)
	h.WaitCount(t, 5, mailDone)
	if got := len(catcher.Messages()); got != 1 {
		t.Errorf("got %d messages, want 1", got)
	}
	if got := h.Count(t, `SELECT count(*) FROM sent_mails`); got != 1 {
		t.Errorf("got %d sent-mail records, want 1", got)
	}
}

// A server that refuses the mail leaves no record; the job is retried.
func TestRefusedMailIsRetried(t *testing.T) {
	t.Parallel()
	withCatcher, catcher := apptest.WithMailCatcher(t)
	refused := true
	catcher.Reject = func() error {
		if refused {
			refused = false
			return errors.New("try again later")
		}
		return nil
	}
	h := apptest.New(t, withCatcher)
	c := h.NewCustomer(t)
	placeOrder(t, h, c)
	h.StartJobs(t)
	h.WaitCount(t, 1, mailDone)
	if got := len(catcher.Messages()); got != 1 {
		t.Errorf("got %d messages kept, want 1 (the refused one is not)", got)
	}
	if got := h.Count(t, `SELECT attempt FROM river_job WHERE kind = 'order_confirmation_mail'`); got != 2 {
		t.Errorf("got the mail job done at attempt %d, want 2", got)
	}
}

// stalledSMTP accepts connections and never says a word, as a mail server
// that hangs does. accepted is closed on the first connection; hangUp
// closes them all (and runs at cleanup too).
func stalledSMTP(t *testing.T) (addr string, accepted <-chan struct{}, hangUp func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	var (
		mu    sync.Mutex
		conns []net.Conn
		once  sync.Once
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			once.Do(func() { close(first) })
		}
	}()
	hangUp = func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
	t.Cleanup(hangUp)
	return ln.Addr().String(), first, hangUp
}

// A mail server that stalls holds no database connection: the mail job
// sends with no transaction open, from a pool of the jobs' own, so the
// orders placed meanwhile are not kept waiting for one.
func TestStalledMailServerHoldsNoConnection(t *testing.T) {
	t.Parallel()
	addr, accepted, hangUp := stalledSMTP(t)
	pool := pgtest.NewPool(t)
	jobsPool, err := database.OpenBeside(context.Background(), pool, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(jobsPool.Close)
	h := apptest.NewOnPool(t, pool, func(c *apptest.Setup) {
		c.Jobs.SMTPAddr, c.Jobs.PollInterval, c.Jobs.Pool = addr, 50*time.Millisecond, jobsPool
	})
	c := h.NewCustomer(t)
	placeOrder(t, h, c)
	h.StartJobs(t)
	t.Cleanup(hangUp) // before the jobs stop: their send then fails at once
	select {
	case <-accepted:
	case <-time.After(30 * time.Second):
		t.Fatal("the mail job never reached the mail server")
	}
	// The job is now waiting for the server's greeting. A transaction held
	// open through it would be a session idle in transaction for as long
	// as the stall lasts; River's own transactions last milliseconds.
	time.Sleep(1500 * time.Millisecond)
	if n := h.Count(t, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
		AND state LIKE 'idle in transaction%' AND xact_start < now() - interval '1 second'`); n != 0 {
		t.Errorf("got %d transactions held open while the mail server stalls, want 0", n)
	}
	if r := h.PlaceOrder(t, c, "while-stalled", oneMug); r.Status != http.StatusCreated {
		t.Errorf("order while the mail server stalls: got %d %s, want 201", r.Status, r.Body)
	}
}
