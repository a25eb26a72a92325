package chaos

import "time"

// spanRole says how a lasting disruption must be placed against the others.
type spanRole int

const (
	// roleFree may overlap anything (a row lock).
	roleFree spanRole = iota
	// roleOutage is an outage of the database (a PostgreSQL stall or
	// crash), which halts orders by itself; outages may overlap each other.
	roleOutage
	// roleJudged is a disruption during which orders are judged (an SMTP
	// stall, see haltedBySMTP): it should meet no outage, nor an outage's
	// tail (outageTail after it).
	roleJudged
)

// lastingSpan is a disruption that lasts for hold, to be planned.
type lastingSpan struct {
	hold time.Duration
	role spanRole
}

// planTries bounds the draws of planLasting: of the outages' starts, and of
// each judged span's start given those.
const planTries = 200

// planLasting draws a start for each span, so that each is over by hi
// (where lo leaves it room: else it starts at lo), and so that no judged
// span meets an outage or its tail, when planTries draws find such starts;
// else the last draw stands, and apart says so. A short run has room for
// one PostgreSQL stall, one crash and one SMTP stall this way only if they
// are placed so (the SMTP stall first); a long one has room to spare.
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
				fits = clearOfOutages(spans, starts, i)
			}
			apart = apart && fits
		}
		if apart {
			return starts, true
		}
	}
	return starts, false
}

// clearOfOutages reports whether span i ends before every outage begins or
// begins after its tail.
func clearOfOutages(spans []lastingSpan, starts []time.Duration, i int) bool {
	from, to := starts[i], starts[i]+spans[i].hold
	for j, s := range spans {
		if s.role == roleOutage && from < starts[j]+s.hold+outageTail && starts[j] < to {
			return false
		}
	}
	return true
}
