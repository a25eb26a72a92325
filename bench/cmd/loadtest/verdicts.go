package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"exactlyonce/bench/loadtest"
)

// legs are the results the targets are judged on.
type legs struct {
	// fakeDB is whether the fake Stripe kept its state in PostgreSQL
	// (-fake-store=postgres), its transactions in the order's scripts.
	fakeDB                                                       bool
	pgNew, appNew, appNewJobs, pgSeed, pgPoint, appReplay, floor loadtest.Result
	// pgMin is the minimal pattern (pgbench/minimal.sql), issue 25's fixed
	// yardstick; defNew and defReplay are the shop as shipped (RUN_JOBS=1).
	pgMin, defNew, defReplay loadtest.Result
	// perOrder is the statements (round trips) a new order as shipped
	// cost the database, its jobs included; 0 when not counted.
	perOrder float64
	// orderFloor is a bare Go program making an order's exchanges
	// (loadtest.OrderFloor); zero when not measured.
	orderFloor loadtest.Result
	// quietReplay is the shop as shipped replaying with tracing and the
	// access log off; zero when not measured.
	quietReplay loadtest.Result
	// sweeps are the -sweep rows that carry a p99 target, each with its
	// baseline.
	sweeps []loadtest.Row
}

// replayCPU is issue 12's bound on the web process's CPU per replay.
const replayCPU = 60 * time.Microsecond

// verdicts judges the targets on one run's legs — issue 37's first, the
// shop as shipped against the minimal pattern and a bare Go server, then
// the earlier issues' — and for each one missed says why, from what the
// same run measured, and what to do next.
func verdicts(l legs) ([]loadtest.Verdict, error) {
	app, err := loadtest.Statements("neworder.sql", l.fakeDB)
	if err != nil {
		return nil, err
	}
	seed, err := loadtest.Statements("seed.sql", l.fakeDB)
	if err != nil {
		return nil, err
	}
	minimal, err := loadtest.Statements("minimal.sql", false)
	if err != nil {
		return nil, err
	}
	ratio := func(r, base loadtest.Result) float64 {
		if base.Rate() == 0 {
			return 0
		}
		return r.Rate() / base.Rate()
	}
	newOrders := ratio(l.appNew, l.pgNew)
	withJobs := ratio(l.appNewJobs, l.pgNew)
	vsSeed := ratio(l.appNew, l.pgSeed)
	seedVsApp := ratio(l.pgSeed, l.pgNew)
	replays := ratio(l.appReplay, l.pgPoint)
	cpu, floor := l.appReplay.CPUPerRequest(), l.floor.CPUPerRequest()

	vsMin := ratio(l.appNew, l.pgMin)
	defVsMin := ratio(l.defNew, l.pgMin)
	defReplays := ratio(l.defReplay, l.pgPoint)
	defCPU := l.defNew.CPUPerRequest()
	cpuVsFloor := 0.0
	if floor > 0 {
		cpuVsFloor = float64(defCPU) / float64(floor)
	}
	replaysVsFloor := ratio(l.defReplay, l.floor)
	vs := []loadtest.Verdict{{
		Target:   "issue 37: new orders as shipped ≥ 0.25× the minimal pattern",
		Measured: fmt.Sprintf("%.3f× (%.0f/s against %.0f/s)", defVsMin, l.defNew.Rate(), l.pgMin.Rate()),
		Met:      defVsMin >= 0.25,
		Why:      newOrdersWhy(l, app, minimal, ratio(l.pgNew, l.pgMin)),
	}, {
		Target:   "issue 37: the shop's CPU per new order as shipped (its two jobs included) ≤ 25× the bare server's per request",
		Measured: fmt.Sprintf("%.0f× (%s against %s)", cpuVsFloor, loadtest.FormatDuration(defCPU), loadtest.FormatDuration(floor)),
		Met:      cpuVsFloor > 0 && cpuVsFloor <= 25,
		Why:      orderFloorWhy(l, floor),
	}, {
		Target: "issue 37: replays as shipped ≥ 0.6× the bare server's rate",
		Measured: fmt.Sprintf("%.2f× (%.0f/s against %.0f/s; %s web CPU per replay against %s)", replaysVsFloor, l.defReplay.Rate(), l.floor.Rate(),
			loadtest.FormatDuration(l.defReplay.CPUPerRequest()), loadtest.FormatDuration(floor)),
		Met: replaysVsFloor >= 0.6,
		Why: replaysWhy(l),
	}, {
		Target:   "issue 25: new orders ≥ 0.5× the minimal pattern, RUN_JOBS=0",
		Measured: fmt.Sprintf("%.2f× (%s web CPU per order)", vsMin, loadtest.FormatDuration(l.appNew.CPUPerRequest())),
		Met:      vsMin >= 0.5,
		Why: fmt.Sprintf("the minimal pattern is %d statements; the app's order is %d to PostgreSQL plus four HTTP exchanges in the web process "+
			"(the order, the fake Stripe's create and confirm, and its webhook), which took %.2f of a core during the leg, and the load generator %.2f: "+
			"on %d cores that CPU is PostgreSQL's. Next: make loadtest PROFILE=… and the largest item in the neworders profile",
			minimal, app, cores(l.appNew.CPU, l.appNew.Elapsed), cores(l.appNew.ClientCPU, l.appNew.Elapsed), runtime.NumCPU()),
	}, {
		Target:   "issue 25: new orders ≥ 0.35× the minimal pattern, as shipped (jobs in the web process)",
		Measured: fmt.Sprintf("%.2f× (%s web CPU per order, its jobs included)", defVsMin, loadtest.FormatDuration(l.defNew.CPUPerRequest())),
		Met:      defVsMin >= 0.35,
		Why: fmt.Sprintf("as RUN_JOBS=0's, plus each order's two jobs in the same process (River's fetch and completion, the loyalty award, the mail's SMTP exchange and its record): "+
			"%s web CPU per order against %s without them. Next: the neworders-defaults profile",
			loadtest.FormatDuration(l.defNew.CPUPerRequest()), loadtest.FormatDuration(l.appNew.CPUPerRequest())),
	}, {
		Target:   "issue 25: replays ≥ 0.6× pgbench point select, as shipped (issue 37 measures replays against the bare server instead)",
		Measured: fmt.Sprintf("%.2f× (%s web CPU per replay)", defReplays, loadtest.FormatDuration(l.defReplay.CPUPerRequest())),
		Met:      defReplays >= 0.6,
		Why: fmt.Sprintf("a bare net/http server answering the same request ran at %.2f× here, with %s CPU per request: the floor of any Go server on this machine. "+
			"Next: the replays-defaults profile", ratio(l.floor, l.pgPoint), loadtest.FormatDuration(floor)),
	}, {
		Target:   "issue 12: new orders ≥ 0.6× pgbench of the app's statements",
		Measured: fmt.Sprintf("%.2f× for the order path (%.2f× with its jobs done during the leg by web worker)", newOrders, withJobs),
		Met:      newOrders >= 0.6,
		Why: fmt.Sprintf("pgbench's leg leaves PostgreSQL all %d cores; during the app's, the web process took %.2f of a core (%s per order; the fake Stripe is a process of its own, its CPU in the table's provider column) "+
			"and the HTTP load generator %.2f, which PostgreSQL then lacks. "+
			"Next: the shop, the provider and the load generator on machines of their own, or pinned to cores apart from PostgreSQL's",
			runtime.NumCPU(), cores(l.appNew.CPU, l.appNew.Elapsed), loadtest.FormatDuration(l.appNew.CPUPerRequest()), cores(l.appNew.ClientCPU, l.appNew.Elapsed)),
	}, {
		Target:   "issue 12: new orders ≥ 2× the seed's five-round-trip shape",
		Measured: fmt.Sprintf("%.2f×", vsSeed),
		Met:      vsSeed >= 2,
		Why: fmt.Sprintf("out of reach by construction: the seed's shape is %d statements to the app's %d%s, "+
			"so even where round trips were all that cost the app could be at most %.2f×; on loopback PostgreSQL's CPU bounds both, "+
			"and pgbench ran the seed's shape at %.2f× the app's statements (the app's do more: the fence, the audit event, the cart check). "+
			"Next: measure with a network delay between the app and PostgreSQL (tc netem, as root)", seed, app, fakeShare(l.fakeDB), float64(seed)/float64(app), seedVsApp),
	}, {
		Target:   "issue 12: replays ≥ 0.3× pgbench point select",
		Measured: fmt.Sprintf("%.2f×", replays),
		Met:      replays >= 0.3,
		Why: fmt.Sprintf("a bare net/http server answering the same request ran at %.2f× here; the rest is the shop's own work per request. "+
			"Next: make loadtest PROFILE=… and the largest item in the profile", ratio(l.floor, l.pgPoint)),
	}, {
		Target:   "issue 12: web CPU per replay ≤ 60 µs",
		Measured: fmt.Sprintf("%s (a bare net/http server: %s)", loadtest.FormatDuration(cpu), loadtest.FormatDuration(floor)),
		Met:      cpu > 0 && cpu <= replayCPU,
		Why: fmt.Sprintf("the floor, a bare net/http server answering the same request, used %s per request on this machine, %.0f %% of the budget; "+
			"routing, the security headers, the access log line, the token check, the strict decode, the fingerprint and the remembered answer add %s. "+
			"Next: the access log line is the largest of them (LOG_LEVEL=warn drops it), then echo's middleware chain",
			loadtest.FormatDuration(floor), 100*float64(floor)/float64(replayCPU), loadtest.FormatDuration(cpu-floor)),
	}}
	for _, s := range l.sweeps {
		p99 := float64(s.Result.P99) / float64(s.Baseline.P99)
		vs = append(vs, loadtest.Verdict{
			Target:   "claim p99 within 20 %: " + s.Result.Name,
			Measured: fmt.Sprintf("p99 %.2f× (%s → %s)", p99, loadtest.FormatDuration(s.Baseline.P99), loadtest.FormatDuration(s.Result.P99)),
			Met:      p99 <= 1.2,
			Why:      sweepWhy(s.Result.Name),
		})
	}
	return vs, nil
}

// sweepWhy is the reason and next step for a retention leg that missed.
func sweepWhy(name string) string {
	if strings.Contains(name, "partition") {
		return "dropping the partition takes about a second of the 5 s leg: what remains is the noise between legs. Next: longer legs (-duration)"
	}
	return "batched deletes take CPU and WAL the claims need, for minutes, where dropping a day's partition takes about a second (the partition rows of -sweep-by). " +
		"Next: docs/partition-notes.md — partitioning the key table costs every claim and needs a lock and a lookup to stay exactly-once, so it waits for a backlog that matters"
}

// cores is how many cores cpu time over elapsed wall time kept busy.
func cores(cpu, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return cpu.Seconds() / elapsed.Seconds()
}

// fakeShare says what both order scripts count of the fake Stripe's work.
func fakeShare(fakeDB bool) string {
	if fakeDB {
		return ", both with the fake Stripe's same two transactions"
	}
	return " (the fake Stripe's in memory, in neither)"
}

// orderFloorWhy says why the shop's CPU per order misses its bound: what
// an order's exchanges alone cost a bare Go program in the same run (the
// order floor), against the bound, and what the shop's own work adds.
func orderFloorWhy(l legs, floor time.Duration) string {
	shop, bare := l.defNew.CPUPerRequest(), l.orderFloor.CPUPerRequest()
	jobs := fmt.Sprintf("without its jobs (RUN_JOBS=0) an order cost the web process %s", loadtest.FormatDuration(l.appNew.CPUPerRequest()))
	if bare == 0 || floor == 0 {
		return jobs + ". Next: the neworders-defaults profile"
	}
	times := float64(bare) / float64(floor)
	verdict := "under the bound: the shop's own work is what to cut (the neworders-defaults profile)"
	if times > 25 {
		verdict = "over the bound already: with this many exchanges no Go program can meet it here"
	}
	return fmt.Sprintf("a bare Go program making only an order's exchanges (the round trips, the provider's two calls, the webhook, the mail) spent %s per order, %.0f× the bare server's request, %s; "+
		"the shop's own work adds %s (%.1f× the exchanges'); %s",
		loadtest.FormatDuration(bare), times, verdict, loadtest.FormatDuration(shop-bare), float64(shop)/float64(bare), jobs)
}

// newOrdersWhy says why new orders as shipped miss the minimal pattern's
// quarter: where pgbench of the order request's own statements (app of
// them, against the minimal pattern's minimal) already runs below it, no
// work outside PostgreSQL can reach it.
func newOrdersWhy(l legs, app, minimal int, ownVsMin float64) string {
	reach := fmt.Sprintf("pgbench of the order request's own %d statements alone (no Go, no HTTP, no webhook, no jobs) ran at %.2f× the minimal pattern's %d in this run", app, ownVsMin, minimal)
	if ownVsMin < 0.25 {
		reach = "out of reach with the statements an order needs: " + reach +
			" (the finish writes the order, its lines, its two outbox jobs and its audit event, and the durability check runs at each commit)"
	}
	return fmt.Sprintf("%s; an order as shipped was %.1f round trips to PostgreSQL, its webhook and jobs included (the table below), "+
		"and the web process took %.2f of a core for it", reach, l.perOrder, cores(l.defNew.CPU, l.defNew.Elapsed))
}

// replaysWhy says why replays as shipped miss 0.6× the bare server: what
// tracing and the access log cost them in the same run, and what is left
// without them.
func replaysWhy(l legs) string {
	why := "the router, the middleware chain (request id, latency, access log, recover, host check, security headers, write limits), tracing's span and the lookup of the remembered answer"
	if l.quietReplay.N == 0 || l.floor.Rate() == 0 {
		return why + ". Next: the replays-defaults profile"
	}
	quiet := l.quietReplay.Rate() / l.floor.Rate()
	return fmt.Sprintf("%s. With tracing and the access log off they ran at %.2f× the bare server (%s web CPU per replay): "+
		"per-request observability costs %.2f× of the rate, and the rest is the shop's own work (the replays-quiet profile)",
		why, quiet, loadtest.FormatDuration(l.quietReplay.CPUPerRequest()), quiet-l.defReplay.Rate()/l.floor.Rate())
}
