package chaos

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestPlanLastingKeepsJudgedSpansClear: with the short run's drive (30 s)
// an SMTP stall is placed clear of two shop stalls, a PostgreSQL stall and
// a crash and of their tails, whatever the seed; the row lock and the
// disturbing ones may overlap; every span is over by hi.
func TestPlanLastingKeepsJudgedSpansClear(t *testing.T) {
	t.Parallel()
	spans := []lastingSpan{
		{hold: 6 * time.Second, role: roleDisturbs},  // shop stall
		{hold: 6 * time.Second, role: roleDisturbs},  // shop stall
		{hold: 12 * time.Second, role: roleDisturbs}, // PostgreSQL stall
		{hold: crashHold, role: roleDisturbs},        // crash
		{hold: 12 * time.Second},                     // row lock
		{hold: 5 * time.Second, role: roleJudged},    // SMTP stall
	}
	lo, hi := 3*time.Second, 24*time.Second
	for seed := range uint64(100) {
		rng := &lockedRand{r: rand.New(rand.NewPCG(seed, seed))}
		starts, apart := planLasting(rng, lo, hi, spans)
		if !apart {
			t.Fatalf("seed %d: no plan with the SMTP stall clear; want one", seed)
		}
		for i, s := range spans {
			if starts[i] < lo || starts[i]+s.hold > hi {
				t.Errorf("seed %d: span %d from %s to %s, want within %s to %s", seed, i, starts[i], starts[i]+s.hold, lo, hi)
			}
		}
		smtp := starts[5]
		for _, o := range []int{0, 1, 2, 3} {
			if smtp < starts[o]+spans[o].hold+disturbedTail && starts[o] < smtp+spans[5].hold {
				t.Errorf("seed %d: the SMTP stall at %s meets outage %d at %s", seed, smtp, o, starts[o])
			}
		}
	}
}

// TestPlanLastingSaysWhenNothingFits: a judged span that cannot be clear
// of a disturbing one is planned anyway, and the plan says so; a span longer than
// the room starts at lo.
func TestPlanLastingSaysWhenNothingFits(t *testing.T) {
	t.Parallel()
	rng := &lockedRand{r: rand.New(rand.NewPCG(1, 2))}
	spans := []lastingSpan{{hold: 12 * time.Second, role: roleDisturbs}, {hold: 12 * time.Second, role: roleJudged}}
	if starts, apart := planLasting(rng, 2*time.Second, 16*time.Second, spans); apart {
		t.Errorf("got a clear plan %v for two 12 s spans in 14 s", starts)
	}
	starts, _ := planLasting(rng, 2*time.Second, 10*time.Second, []lastingSpan{{hold: 12 * time.Second}})
	if starts[0] != 2*time.Second {
		t.Errorf("got a start at %s for a span longer than the room, want lo (2s)", starts[0])
	}
}
