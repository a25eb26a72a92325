package lifecycle

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// Job is background work run on a schedule.
type Job struct {
	Name string
	// Every is the time between runs; zero or less disables the job.
	Every time.Duration
	Run   func(ctx context.Context) error
}

// Workers runs jobs until Stop.
type Workers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start runs each enabled job every Every, the first time one interval after
// the start, until ctx ends or Stop is called. Each interval is stretched by
// up to a tenth at random, so that instances started together drift apart
// instead of querying in lockstep.
func Start(ctx context.Context, log *slog.Logger, jobs ...Job) *Workers {
	ctx, cancel := context.WithCancel(ctx)
	w := &Workers{cancel: cancel}
	for _, j := range jobs {
		if j.Every <= 0 {
			continue
		}
		w.wg.Go(func() { run(ctx, log, j) })
	}
	return w
}

// Stop cancels the jobs and waits for the runs in progress to return.
func (w *Workers) Stop() {
	w.cancel()
	w.wg.Wait()
}

func run(ctx context.Context, log *slog.Logger, j Job) {
	t := time.NewTimer(jittered(j.Every))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := j.Run(ctx); err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "background job failed", "job", j.Name, "err", err)
		}
		t.Reset(jittered(j.Every))
	}
}

func jittered(d time.Duration) time.Duration {
	return d + rand.N(d/10+1)
}
