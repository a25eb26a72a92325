package chaos

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestPlanLastingKeepsApartOnesApart: with the short run's drive (30 s)
// one PostgreSQL stall and one SMTP stall fit apart, whatever the seed;
// the row lock may overlap either; every span is over by hi.
func TestPlanLastingKeepsApartOnesApart(t *testing.T) {
	t.Parallel()
	spans := []lastingSpan{{hold: 12 * time.Second, apart: true}, {hold: 12 * time.Second}, {hold: 5 * time.Second, apart: true}}
	lo, hi := 3*time.Second, 24*time.Second
	for seed := range uint64(50) {
		rng := &lockedRand{r: rand.New(rand.NewPCG(seed, seed))}
		starts, apart := planLasting(rng, lo, hi, spans)
		if !apart {
			t.Fatalf("seed %d: no plan apart; want one (the draws fit in about 7%% of tries)", seed)
		}
		for i, s := range spans {
			if starts[i] < lo || starts[i]+s.hold > hi {
				t.Errorf("seed %d: span %d from %s to %s, want within %s to %s", seed, i, starts[i], starts[i]+s.hold, lo, hi)
			}
		}
		pg, smtp := starts[0], starts[2]
		if pg < smtp+5*time.Second+outageTail && smtp < pg+12*time.Second+outageTail {
			t.Errorf("seed %d: the PostgreSQL stall at %s and the SMTP stall at %s overlap", seed, pg, smtp)
		}
	}
}

// TestPlanLastingSaysWhenNothingFits: spans that cannot be apart in the
// drive are planned anyway, and the plan says so; a span longer than the
// room starts at lo.
func TestPlanLastingSaysWhenNothingFits(t *testing.T) {
	t.Parallel()
	rng := &lockedRand{r: rand.New(rand.NewPCG(1, 2))}
	spans := []lastingSpan{{hold: 12 * time.Second, apart: true}, {hold: 12 * time.Second, apart: true}}
	starts, apart := planLasting(rng, 2*time.Second, 16*time.Second, spans)
	if apart {
		t.Errorf("got a plan apart %v for two 12 s spans in 14 s", starts)
	}
	starts, _ = planLasting(rng, 2*time.Second, 10*time.Second, []lastingSpan{{hold: 12 * time.Second}})
	if starts[0] != 2*time.Second {
		t.Errorf("got a start at %s for a span longer than the room, want lo (2s)", starts[0])
	}
}
