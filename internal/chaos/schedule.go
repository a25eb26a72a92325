package chaos

import "time"

// lastingSpan is a disruption that lasts for hold, to be planned; apart
// ones should not overlap each other.
type lastingSpan struct {
	hold  time.Duration
	apart bool
}

// planTries bounds the draws of planLasting.
const planTries = 200

// planLasting draws a start for each span, so that each is over by hi
// (where lo leaves it room: else it starts at lo), and so that no two
// spans marked apart overlap, outageTail included, when planTries draws
// find such starts; else the last draw stands, and apart says so.
//
// Apart are the disruptions a check must see alone: orders are judged
// during an SMTP stall only where the database is not out as well (see
// haltedBySMTP), and a short run has room for one of each only if they
// are placed apart.
func planLasting(rng *lockedRand, lo, hi time.Duration, spans []lastingSpan) (starts []time.Duration, apart bool) {
	starts = make([]time.Duration, len(spans))
	for try := 0; try < planTries; try++ {
		for i, s := range spans {
			starts[i] = rng.between(lo, max(lo, hi-s.hold))
		}
		if spacedApart(spans, starts) {
			return starts, true
		}
	}
	return starts, false
}

// spacedApart reports whether no two apart spans overlap, outageTail
// included.
func spacedApart(spans []lastingSpan, starts []time.Duration) bool {
	for i := range spans {
		for j := i + 1; j < len(spans); j++ {
			if !spans[i].apart || !spans[j].apart {
				continue
			}
			if starts[i] < starts[j]+spans[j].hold+outageTail && starts[j] < starts[i]+spans[i].hold+outageTail {
				return false
			}
		}
	}
	return true
}
