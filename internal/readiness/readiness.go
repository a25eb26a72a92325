// Package readiness is the report GET /readyz answers with: each thing the
// instance depends on, checked at once, with its status and how long the
// check took. Only the checks that gate decide whether the instance is
// ready; the others are reported for the operator, because taking every
// instance out of rotation cannot mend a dependency they all share (the
// payment provider, the job workers), and would turn a payment outage
// into an outage of the whole shop.
package readiness

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Check is one thing readiness looks at.
type Check struct {
	Name string
	// Gates makes a failure of this check a failure of the instance (503).
	Gates bool
	// After names a check that must pass first; when it does not, this
	// one is skipped (the migrations cannot be read without the database).
	After string
	// Run checks. Its detail is shown to whoever asks (the probe is on the
	// public listener), so it is a fixed wording that names what it is
	// about ("database unreachable"), never an error's text; the error is
	// logged.
	Run func(ctx context.Context) (detail string, err error)
}

// The statuses of a check.
const (
	OK      = "ok"
	Fail    = "fail"
	Skipped = "skipped"
)

// The statuses of a report.
const (
	Ready       = "ready"       // every check passed
	Degraded    = "degraded"    // ready, but a check that does not gate failed
	Unavailable = "unavailable" // a check that gates failed: 503
)

// Result is one check's outcome.
type Result struct {
	Name      string  `json:"name"`
	Status    string  `json:"status"`
	Gates     bool    `json:"gates"`
	LatencyMS float64 `json:"latency_ms"`
	Detail    string  `json:"detail,omitempty"`
}

// Report is every check's outcome. Reason is the detail of the first
// gating check that failed ("database unreachable", "migrations
// pending"), as the probe said before it reported each check.
type Report struct {
	Status string   `json:"status"`
	Reason string   `json:"reason,omitempty"`
	Checks []Result `json:"checks"`
}

// Checker runs a set of checks.
type Checker struct {
	checks  []Check
	timeout time.Duration
	log     *slog.Logger
}

// New returns a checker of checks, each bounded by timeout: a probe that
// hangs is worse than one that says no.
func New(timeout time.Duration, log *slog.Logger, checks ...Check) *Checker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Checker{checks: checks, timeout: timeout, log: log}
}

// Check runs the checks, those without an After at once, the others when
// the check they come after has ended, and reports them in their order.
func (c *Checker) Check(ctx context.Context) Report {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	results := make([]Result, len(c.checks))
	done := make([]chan struct{}, len(c.checks))
	index := map[string]int{}
	for i, ch := range c.checks {
		done[i] = make(chan struct{})
		index[ch.Name] = i
	}
	var wg sync.WaitGroup
	for i, ch := range c.checks {
		wg.Go(func() {
			defer close(done[i])
			r := Result{Name: ch.Name, Gates: ch.Gates}
			if j, ok := index[ch.After]; ok {
				<-done[j]
				if results[j].Status != OK {
					r.Status, r.Detail = Skipped, "needs "+ch.After
					results[i] = r
					return
				}
			}
			start := time.Now()
			detail, err := ch.Run(ctx)
			r.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
			r.Status, r.Detail = OK, detail
			if err != nil {
				r.Status = Fail
				c.log.WarnContext(ctx, "readiness check failed", "check", ch.Name, "detail", detail, "err", err)
			}
			results[i] = r
		})
	}
	wg.Wait()
	rep := Report{Status: Ready, Checks: results}
	for _, r := range results {
		switch {
		case r.Status == OK:
		case r.Gates && rep.Status != Unavailable:
			rep.Status, rep.Reason = Unavailable, r.Detail
		case rep.Status == Ready:
			rep.Status = Degraded
		}
	}
	return rep
}

// ServeHTTP answers the report as JSON: 200 when the instance is ready
// (degraded included), 503 when a gating check failed.
func (c *Checker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rep := c.Check(r.Context())
	status := http.StatusOK
	if rep.Status == Unavailable {
		status = http.StatusServiceUnavailable
	}
	b, err := json.Marshal(rep)
	if err != nil { // a Report always marshals
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n')) // the prober hung up
}
