package main

import (
	"strings"
	"testing"
	"time"

	"exactlyonce/bench/loadtest"
)

func TestVerdicts(t *testing.T) {
	leg := func(n int, cpu time.Duration) loadtest.Result {
		return loadtest.Result{N: n, Elapsed: time.Second, CPU: cpu * time.Duration(n)}
	}
	quiet := loadtest.Result{Name: "claim alone", N: 1, Elapsed: time.Second, P99: 20 * time.Millisecond}
	busy := loadtest.Result{Name: "claim while the sweeper deletes 1M keys", N: 1, Elapsed: time.Second, P99: 30 * time.Millisecond}
	l := legs{
		fakeDB: true,
		pgNew:  leg(1000, 0), appNew: leg(610, time.Millisecond), appNewJobs: leg(350, 3*time.Millisecond),
		pgSeed: leg(1200, 0), pgPoint: leg(30000, 0),
		appReplay: leg(15000, 64*time.Microsecond), floor: leg(24000, 34*time.Microsecond),
		pgMin: leg(2400, 0), defNew: leg(960, 2*time.Millisecond), defReplay: leg(18000, 70*time.Microsecond),
		sweeps:   []loadtest.Row{{Result: busy, Baseline: &quiet}},
		perOrder: 14.5, orderFloor: leg(1000, 1200*time.Microsecond), quietReplay: leg(21600, 50*time.Microsecond),
	}
	vs, err := verdicts(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		met  bool
		says []string
	}{
		// issue 37's: 960/2400; 2 ms against the floor's 34 µs; 18000/24000.
		{true, []string{"0.400×", "14.5 round trips", "own 16 statements alone", "0.42× the minimal pattern's 3"}},
		{false, []string{"59×", "2.00 ms against 34 µs", "spent 1.20 ms per order, 35× the bare server's request, over the bound already",
			"adds 800 µs (1.7× the exchanges')", "1.00 ms"}},
		{true, []string{"0.75×", "70 µs web CPU per replay against 34 µs", "off they ran at 0.90× the bare server (50 µs web CPU per replay)", "costs 0.15×"}},
		{false, []string{"0.25×", "1.00 ms web CPU per order", "the minimal pattern is 3 statements", "to PostgreSQL plus four HTTP exchanges"}},
		{true, []string{"0.40×", "2.00 ms web CPU per order, its jobs included", "against 1.00 ms without them"}},
		{true, []string{"0.60×", "70 µs web CPU per replay", "ran at 0.80× here, with 34 µs"}},
		{true, []string{"0.61×", "0.35×", "took 0.61 of a core"}},
		{false, []string{"0.51×", "18 statements to the app's 16", "at most 1.12×", "1.20×"}},
		{true, []string{"0.50×"}},
		{false, []string{"64 µs (a bare net/http server: 34 µs)", "used 34 µs", "57 %", "add 30 µs"}},
		{false, []string{"p99 1.50×", "20.00 ms → 30.00 ms", "batched deletes"}},
	}
	if len(vs) != len(want) {
		t.Fatalf("got %d verdicts, want %d", len(vs), len(want))
	}
	for i, w := range want {
		v := vs[i]
		if v.Met != w.met {
			t.Errorf("%s: met %v, want %v", v.Target, v.Met, w.met)
		}
		for _, s := range w.says {
			if !strings.Contains(v.Measured+" "+v.Why, s) {
				t.Errorf("%s: %q / %q does not say %q", v.Target, v.Measured, v.Why, s)
			}
		}
	}
}

// With the fake Stripe in memory (the load test's default) the order's
// scripts count only the shop's statements, and the verdict says so.
func TestVerdictsWithTheFakeInMemory(t *testing.T) {
	vs, err := verdicts(legs{pgNew: loadtest.Result{N: 1, Elapsed: time.Second}, pgSeed: loadtest.Result{N: 1, Elapsed: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	seed := vs[7]
	for _, s := range []string{"5 statements to the app's 3", "the fake Stripe's in memory, in neither"} {
		if !strings.Contains(seed.Why, s) {
			t.Errorf("%s: %q does not say %q", seed.Target, seed.Why, s)
		}
	}
}

// Where pgbench of the order's own statements runs below the quarter of
// the minimal pattern, the verdict says the target is out of reach; where
// the order floor is under the bound, it says the shop's work is to cut.
func TestVerdictsOutOfReach(t *testing.T) {
	leg := func(n int, cpu time.Duration) loadtest.Result {
		return loadtest.Result{N: n, Elapsed: time.Second, CPU: cpu * time.Duration(n)}
	}
	vs, err := verdicts(legs{pgNew: leg(900, 0), pgSeed: leg(1, 0), pgMin: leg(5400, 0), defNew: leg(150, 4*time.Millisecond),
		floor: leg(14000, 32*time.Microsecond), orderFloor: leg(500, 600*time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	for i, says := range map[int][]string{
		0: {"out of reach with the statements an order needs", "0.17× the minimal pattern's 3"},
		1: {"spent 600 µs per order, 19× the bare server's request, under the bound: the shop's own work is what to cut", "adds 3.40 ms"},
	} {
		for _, s := range says {
			if !strings.Contains(vs[i].Why, s) {
				t.Errorf("%s: %q does not say %q", vs[i].Target, vs[i].Why, s)
			}
		}
	}
}
