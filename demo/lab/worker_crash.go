package lab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"exactlyonce/demo/lab/labdb"
	"exactlyonce/internal/outbox"
)

// errSimulatedCrash is the loyalty job's first attempt in the worker-crash
// scenario: the worker's transaction rolls back after the ledger insert,
// as a killed process's would.
var errSimulatedCrash = errors.New("lab: simulated worker crash after the ledger insert, before the job's completion")

// crashes are the customers whose next loyalty job dies once after its
// effect (the worker-crash scenario arms it for its shopper).
type crashes struct {
	mu sync.Mutex
	m  map[uuid.UUID]bool
}

func (c *crashes) arm(customer uuid.UUID) (disarm func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[uuid.UUID]bool{}
	}
	c.m[customer] = true
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.m, customer)
	}
}

func (c *crashes) armed(customer uuid.UUID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[customer]
}

// CrashAfterAward is the loyalty worker's AfterAward hook through which the
// lab kills a job after its effect: the first attempt of a job of an armed
// shopper fails there, after the ledger insert and before the job is marked
// completed, and River delivers the job again. Other jobs pass.
func (r *Runner) CrashAfterAward(_ context.Context, job *river.Job[outbox.LoyaltyArgs]) error {
	if job.Attempt == 1 && r.crashes.armed(job.Args.CustomerID) {
		return errSimulatedCrash
	}
	return nil
}

// jobWait bounds how long the scenario waits for the redelivered job:
// River retries the first failure after about a second.
const jobWait = 20 * time.Second

// workerCrashSteps places one order and follows its loyalty job through
// the crash and the redelivery.
func workerCrashSteps(ctx context.Context, s *session) error {
	disarm := s.r.crashes.arm(s.shopper.ID)
	defer disarm()
	if resp := s.place(ctx, "order", uuid.NewString(), oneMug, 0); resp.status != http.StatusCreated {
		return fmt.Errorf("worker crash: the order got %d, want 201", resp.status)
	}
	job, err := s.waitLoyaltyJob(ctx)
	if err != nil {
		return err
	}
	if job.State != "completed" {
		s.fail(fmt.Sprintf("the loyalty job is %s after %s, not completed: is a worker running (RUN_JOBS, or web worker)?", job.State, jobWait))
		return nil
	}
	s.rec.markAt("job died", job.FirstFailedAt)
	s.rec.markAt("delivered again", job.AttemptedAt)
	s.note(fmt.Sprintf("loyalty job %d: attempt 1 died after the ledger insert (%q); River delivered it again and it completed at attempt %d",
		job.ID, job.FirstError, job.Attempt))
	ledger, err := s.r.q.CustomerLedger(ctx, s.shopper.ID)
	if err != nil {
		return fmt.Errorf("read ledger: %w", err)
	}
	if ledger.Rows != 1 || job.Attempt < 2 {
		s.fail(fmt.Sprintf("the ledger has %d rows (%d points) after %d attempts; want 1 row after 2", ledger.Rows, ledger.Points, job.Attempt))
		return nil
	}
	s.note(fmt.Sprintf("the ledger has one row for the order: %d points, counted once", ledger.Points))
	s.fact("ledger rows", "1")
	s.fact("recovered by", fmt.Sprintf("redelivery (attempt %d)", job.Attempt))
	return nil
}

// waitLoyaltyJob waits for the shopper's loyalty job to complete, or for
// jobWait, and returns it as it is then.
func (s *session) waitLoyaltyJob(ctx context.Context) (labdb.OrderLoyaltyJobsRow, error) {
	deadline := time.Now().Add(jobWait)
	for {
		jobs, err := s.r.q.OrderLoyaltyJobs(ctx, s.shopper.ID)
		if err != nil {
			return labdb.OrderLoyaltyJobsRow{}, fmt.Errorf("read loyalty jobs: %w", err)
		}
		if len(jobs) == 1 && (jobs[0].State == "completed" || time.Now().After(deadline)) {
			return jobs[0], nil
		}
		if len(jobs) != 1 && time.Now().After(deadline) {
			return labdb.OrderLoyaltyJobsRow{}, fmt.Errorf("got %d loyalty jobs for the order, want 1", len(jobs))
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return labdb.OrderLoyaltyJobsRow{}, err
		}
	}
}
