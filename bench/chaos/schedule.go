package chaos

import "time"

// spanRole says how a lasting disruption must be placed against the others.
type spanRole int

const (
	// roleFree may overlap anything (a row lock).
	roleFree spanRole = iota
	// roleDisturbs halts or slows orders by itself (a PostgreSQL stall or
	// crash, a shop's SIGSTOP); such disruptions may overlap each other.
	roleDisturbs
	// roleJudged is a disruption during which orders are judged (an SMTP
	// stall, see haltedBySMTP): it should meet none of the disturbing
	// ones, nor their tails (disturbedTail after each).
	roleJudged
)

// lastingSpan is a disruption that lasts for hold, to be planned.
type lastingSpan struct {
	hold time.Duration
	role spanRole
}

// planTries bounds the draws of planLasting: of the disturbing spans'
// starts, and of each judged span's start given those.
const planTries = 200

// planLasting draws a start for each span, so that each is over by hi
// (where lo leaves it room: else it starts at lo), and so that no judged
// span meets a disturbing one or its tail, when planTries draws find such
// starts; else the last draw stands, and apart says so. A short run has
// room for one SMTP stall clear of a PostgreSQL stall, a crash and two
// shop stalls only if the SMTP stall comes first; a long one has room to
// spare.
func planLasting(rng *lockedRand, lo, hi time.Duration, spans []lastingSpan) (starts []time.Duration, apart bool) {
	starts = make([]time.Duration, len(spans))
	draw := func(i int) { starts[i] = rng.between(lo, max(lo, hi-spans[i].hold)) }
	for try := 0; try < planTries; try++ {
		for i, s := range spans {
			if s.role != roleJudged {
				draw(i)
			}
		}
		apart = true
		for i, s := range spans {
			if s.role != roleJudged {
				continue
			}
			fits := false
			for j := 0; j < planTries && !fits; j++ {
				draw(i)
				fits = clearOfDisturbance(spans, starts, i)
			}
			apart = apart && fits
		}
		if apart {
			return starts, true
		}
	}
	return starts, false
}

// clearOfDisturbance reports whether span i ends before every disturbing
// span begins or begins after its tail.
func clearOfDisturbance(spans []lastingSpan, starts []time.Duration, i int) bool {
	from, to := starts[i], starts[i]+spans[i].hold
	for j, s := range spans {
		if s.role == roleDisturbs && from < starts[j]+s.hold+disturbedTail && starts[j] < to {
			return false
		}
	}
	return true
}
