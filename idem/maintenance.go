package idem

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// Service is background work the Maintainer runs on a schedule: a
// Completer's or Sweeper's Pass, or the caller's own (a reconciler).
type Service struct {
	Name string
	// Every is the time between runs; zero or less disables the service.
	Every time.Duration
	Run   func(ctx context.Context) error
}

// Maintainer runs the services that keep a key store healthy (settling
// stuck operations, sweeping old answers, the caller's own) as one unit:
// they start together and Stop stops them all.
type Maintainer struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartMaintainer runs each enabled service every Every, the first time one
// interval after the start, until ctx ends or Stop is called. Each interval
// is stretched by up to a tenth at random, so that instances started
// together drift apart instead of querying in lockstep.
func StartMaintainer(ctx context.Context, log *slog.Logger, services ...Service) *Maintainer {
	ctx, cancel := context.WithCancel(ctx)
	m := &Maintainer{cancel: cancel}
	for _, s := range services {
		if s.Every <= 0 {
			continue
		}
		m.wg.Go(func() { runService(ctx, log, s) })
	}
	return m
}

// Stop cancels the services and waits for the runs in progress to return.
func (m *Maintainer) Stop() {
	m.cancel()
	m.wg.Wait()
}

func runService(ctx context.Context, log *slog.Logger, s Service) {
	t := time.NewTimer(jittered(s.Every))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.Run(ctx); err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "background job failed", "job", s.Name, "err", err)
		}
		t.Reset(jittered(s.Every))
	}
}

func jittered(d time.Duration) time.Duration {
	return d + rand.N(d/10+1)
}
