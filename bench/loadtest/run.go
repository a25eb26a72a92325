// Package loadtest is the logic of `make loadtest` (bench/cmd/loadtest): a bounded
// HTTP load generator for the shop on loopback, a pgbench runner for the
// baselines, the web process's CPU time from /proc, and the table that puts
// them side by side. Figures are only comparable within one run.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Options bound one leg of load.
type Options struct {
	Clients  int           // concurrent clients (workers)
	Duration time.Duration // the leg ends after this long...
	Max      int           // ...or after this many requests, whichever comes first (0: no count bound)
}

// Result is what one leg measured.
type Result struct {
	Name     string
	N        int // requests (or transactions) that succeeded
	Errors   int
	FirstErr error
	Elapsed  time.Duration
	P50, P99 time.Duration
	// CPU is the web process's CPU time (user+system) spent during the
	// leg; zero when not measured (pgbench legs).
	CPU time.Duration
	// ClientCPU is the load generator's own CPU time during the leg: on a
	// small machine it competes with the shop and PostgreSQL for the cores.
	ClientCPU time.Duration
	// ProviderCPU is the fake Stripe's process's CPU time during the leg:
	// the provider runs apart from the shop, on a database of its own, as
	// Stripe does, so that the shop's own cost is the web column alone.
	ProviderCPU time.Duration
}

// Rate is the successful requests per second.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.N) / r.Elapsed.Seconds()
}

// CPUPerRequest is the web process's CPU time per successful request.
func (r Result) CPUPerRequest() time.Duration {
	if r.N == 0 || r.CPU == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.N)
}

// ProviderCPUPerRequest is the fake provider's CPU time per successful
// request.
func (r Result) ProviderCPUPerRequest() time.Duration {
	if r.N == 0 || r.ProviderCPU == 0 {
		return 0
	}
	return r.ProviderCPU / time.Duration(r.N)
}

// Run calls do from opts.Clients goroutines until the duration or the
// request count is reached, and reports the rate and latency percentiles of
// the calls that returned nil. worker numbers the goroutine, from 0.
func Run(ctx context.Context, name string, opts Options, do func(ctx context.Context, worker int) error) Result {
	if opts.Clients < 1 {
		opts.Clients = 1
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Duration)
	defer cancel()
	var (
		issued atomic.Int64
		mu     sync.Mutex
		lat    []time.Duration
		errs   int
		first  error
		wg     sync.WaitGroup
	)
	start := time.Now()
	for w := range opts.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 1024)
			var localErrs int
			var localFirst error
			for ctx.Err() == nil {
				if opts.Max > 0 && issued.Add(1) > int64(opts.Max) {
					break
				}
				t := time.Now()
				err := do(ctx, w)
				d := time.Since(t)
				if err != nil {
					if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
						break // cut off by the end of the leg
					}
					localErrs++
					if localFirst == nil {
						localFirst = err
					}
					continue
				}
				local = append(local, d)
			}
			mu.Lock()
			lat = append(lat, local...)
			errs += localErrs
			if first == nil {
				first = localFirst
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	r := Result{Name: name, N: len(lat), Errors: errs, FirstErr: first, Elapsed: time.Since(start)}
	r.P50, r.P99 = Percentiles(lat)
	return r
}

// Percentiles returns the 50th and 99th percentiles (nearest rank).
func Percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return rank(0.50), rank(0.99)
}

func (r Result) String() string {
	return fmt.Sprintf("%s: %d ok, %d errors in %s", r.Name, r.N, r.Errors, r.Elapsed.Round(time.Millisecond))
}
