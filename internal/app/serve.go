package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"exactlyonce/idem"
	"exactlyonce/internal/pickup"
)

// cutOffGrace is how long requests abandoned at the shutdown deadline get
// to send their answer (a 503 telling the client to retry) before their
// connections are closed. Abandoned work stops at once, so this is short.
const cutOffGrace = 2 * time.Second

// StartWorkers runs the maintenance services as one unit (idem.Maintainer):
// the completer, the sweeper and the reconciler of orders, and the kit's own
// completer and sweeper, each every configured interval (a zero interval
// leaves it off), until ctx ends or the result's Stop is called.
func (a *App) StartWorkers(ctx context.Context) *idem.Maintainer {
	return idem.StartMaintainer(ctx, a.cfg.Log,
		idem.Service{Name: "completer", Every: a.cfg.CompleterInterval, Run: func(ctx context.Context) error {
			_, err := a.Completer.Pass(ctx)
			return err
		}},
		idem.Service{Name: "sweeper", Every: a.cfg.SweepInterval, Run: func(ctx context.Context) error {
			_, err := a.Sweeper.Pass(ctx)
			return err
		}},
		idem.Service{Name: "reconciler", Every: a.cfg.ReconcileInterval, Run: func(ctx context.Context) error {
			_, err := a.Reconciler.Pass(ctx)
			return err
		}},
		idem.Service{Name: "pickup completer", Every: a.cfg.CompleterInterval, Run: func(ctx context.Context) error {
			_, err := (&idem.Completer{Store: a.Keys, Settler: pickup.Settler}).Pass(ctx)
			return err
		}},
		idem.Service{Name: "refund completer", Every: a.cfg.CompleterInterval, Run: func(ctx context.Context) error {
			_, err := (&idem.Completer{Store: a.Refunds.Keys(), Settler: a.Refunds.Settler(), Grace: a.cfg.CompleterGrace}).Pass(ctx)
			return err
		}},
		idem.Service{Name: "refund sweeper", Every: a.cfg.SweepInterval, Run: func(ctx context.Context) error {
			_, err := (&idem.Sweeper{Store: a.Refunds.Keys(), Keep: a.cfg.KeyRetention}).Pass(ctx)
			return err
		}},
		idem.Service{Name: "pickup sweeper", Every: a.cfg.SweepInterval, Run: func(ctx context.Context) error {
			_, err := (&idem.Sweeper{Store: a.Keys, Keep: a.cfg.KeyRetention}).Pass(ctx)
			return err
		}},
	)
}

// Serve serves HTTP on ln and runs the background workers until ctx ends,
// then shuts down in order:
//
//  1. stop accepting connections and let the requests in flight finish,
//     for up to grace;
//  2. abandon the ones still running (Engine.Abandon): each stops where it
//     is and its key stays started, for the completer or a retry to resolve
//     once its lock expires; they get cutOffGrace to answer 503;
//  3. stop the workers, letting a pass in progress write what it learned,
//     and the outbox's jobs (Config.RunJobs), letting those running finish
//     for a few seconds; a job cut off is delivered again.
//
// The caller closes the pool after Serve returns, when nothing uses it.
func (a *App) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	if a.deploymentErr != nil {
		return a.deploymentErr
	}
	srv := newServer(a.Handler(), a.cfg.ProviderTimeout)
	// The workers outlive ctx: they stop after the server, in step 3.
	workers := a.StartWorkers(context.WithoutCancel(ctx))
	defer workers.Stop()
	if a.cfg.RunJobs {
		if a.jobsErr != nil {
			return a.jobsErr
		}
		if err := a.Jobs.Start(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("start jobs: %w", err)
		}
		defer stopJobs(a.Jobs, a.cfg.Log)
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	a.cfg.Log.Info("shutting down: finishing requests in flight", "grace", grace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		a.cfg.Log.Warn("shutdown: grace period over; abandoning requests in flight, whose keys stay started")
		a.Checkout.Abandon()
		cutOffCtx, cancel := context.WithTimeout(context.Background(), cutOffGrace)
		defer cancel()
		if err := srv.Shutdown(cutOffCtx); err != nil {
			srv.Close()
		}
		err = nil
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	a.cfg.Log.Info("shutdown: stopping background workers")
	return nil
}
