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

// Service is the completer as a Service of the Maintainer, run every every.
func (c *Completer) Service(every time.Duration) Service {
	return Service{Name: "completer", Every: every, Run: func(ctx context.Context) error {
		_, err := c.Pass(ctx)
		return err
	}}
}

// Service is the sweeper as a Service of the Maintainer, run every every.
func (s *Sweeper) Service(every time.Duration) Service {
	return Service{Name: "sweeper", Every: every, Run: func(ctx context.Context) error {
		_, err := s.Pass(ctx)
		return err
	}}
}

// Maintenance is what Maintain runs for one store. Only Store is required.
type Maintenance struct {
	Store *Store
	// Settler settles a key whose attempt died holding it (see Settler);
	// default Release: right for work that writes only in the transaction
	// that finishes its key (Do, a Form, idemhttp.Handle), since such a key
	// still started has written nothing.
	Settler Settler
	// Grace is how long a stuck key is left to its client's retries before
	// the completer settles it; default a minute.
	Grace time.Duration
	// Keep is how long finished answers are kept (the sweeper's); default
	// 24 hours. Keep it above every client's retry window and the forms'
	// TTL.
	Keep time.Duration
	// CompleteEvery and SweepEvery space the passes; zero is the default,
	// 10 s and a minute, and less than zero turns that service off (the
	// sweep runs on one instance only, say, or the keys' kind has a
	// completer of its own).
	CompleteEvery, SweepEvery time.Duration
	// Log receives the passes' failures; default slog.Default().
	Log *slog.Logger
	// Services run beside them (a reconciler of the application's own).
	Services []Service
}

// Release is the Settler of work that writes only in the transaction that
// finishes its key: a key still started wrote nothing, so releasing it lets
// the client's next submission start afresh.
var Release Settler = SettlerFunc(func(ctx context.Context, l *Lock) (string, error) {
	return "released", l.Release(ctx)
})

// Maintain runs the completer and the sweeper of m.Store, and m.Services,
// until ctx ends, then waits for the passes in progress. It is
// StartMaintainer with the kit's defaults, for an application that has
// nothing to add: go idem.Maintain(ctx, idem.Maintenance{Store: keys}).
// A negative CompleteEvery or SweepEvery leaves that service out.
func Maintain(ctx context.Context, m Maintenance) {
	mt := StartMaintainer(ctx, m.logger(), m.services()...)
	<-ctx.Done()
	mt.Stop()
}

// services are the Maintainer's services for m, with the kit's defaults;
// a service turned off has an Every below zero, which StartMaintainer
// skips.
func (m Maintenance) services() []Service {
	if m.Settler == nil {
		m.Settler = Release
	}
	if m.Grace <= 0 {
		m.Grace = time.Minute
	}
	if m.Keep <= 0 {
		m.Keep = 24 * time.Hour
	}
	if m.CompleteEvery == 0 {
		m.CompleteEvery = 10 * time.Second
	}
	if m.SweepEvery == 0 {
		m.SweepEvery = time.Minute
	}
	return append([]Service{
		(&Completer{Store: m.Store, Settler: m.Settler, Grace: m.Grace}).Service(m.CompleteEvery),
		(&Sweeper{Store: m.Store, Keep: m.Keep}).Service(m.SweepEvery),
	}, m.Services...)
}

func (m Maintenance) logger() *slog.Logger {
	if m.Log == nil {
		return slog.Default()
	}
	return m.Log
}
