package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"exactlyonce/internal/app"
	"exactlyonce/internal/apptest"
)

// `web worker` (app.RunJobs) works the jobs of orders placed through a
// shop that does not (RUN_JOBS off: the harness never starts its jobs),
// and stops when its context ends.
func TestRunJobsWorksJobsOfAnotherProcess(t *testing.T) {
	t.Parallel()
	withCatcher, catcher := apptest.WithMailCatcher(t)
	h := apptest.New(t, withCatcher)
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("place order: got %d %s", r.Status, r.Body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- app.RunJobs(ctx, h.DB.Pool, app.JobsConfig{SMTPAddr: catcher.Addr(), PollInterval: 50 * time.Millisecond})
	}()
	h.WaitCount(t, 2, `SELECT count(*) FROM river_job WHERE state = 'completed'`)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("RunJobs: got %v, want nil after its context ended", err)
	}
	if got := h.Count(t, `SELECT count(*) FROM loyalty_ledger`) + h.Count(t, `SELECT count(*) FROM sent_mails`); got != 2 {
		t.Errorf("got %d ledger rows and sent mails, want 1 of each", got)
	}
}
