package chaos

import (
	"net/http"
	"slices"
	"time"
)

// Outage is the longest span of the drive in which no client was told of a
// new order (no 201), with every answer the clients got meanwhile: how long
// a write outage (a failover, a crash) lasted as the clients saw it, and
// what they were told during it (503 with Retry-After, or no answer).
type Outage struct {
	// FromSeconds is when it began, in seconds since the drive began.
	FromSeconds float64 `json:"from_seconds"`
	Seconds     float64 `json:"seconds"`
	// Statuses and Problems count the answers as Clients' do.
	Statuses map[string]int `json:"statuses"`
	Problems map[string]int `json:"problems"`
}

// answered is one answer a client got, and when.
type answered struct {
	at   time.Time
	resp *http.Response // nil: no answer
	body []byte
}

// longestOutage finds the longest gap between two successive 201s to
// orders (or between the drive's beginning and the first) before end, and
// counts the answers given within it.
func longestOutage(began, end time.Time, created []time.Time, answers []answered) Outage {
	times := append(slices.Clone(created), end)
	slices.SortFunc(times, time.Time.Compare)
	from, to := began, began
	prev := began
	for _, t := range times {
		if t.After(end) {
			t = end
		}
		if t.Sub(prev) > to.Sub(from) {
			from, to = prev, t
		}
		if t.After(prev) {
			prev = t
		}
	}
	a := newAnswerCounts()
	for _, x := range answers {
		if x.at.After(from) && x.at.Before(to) {
			a.add(x.resp, x.body)
		}
	}
	return Outage{FromSeconds: from.Sub(began).Seconds(), Seconds: to.Sub(from).Seconds(),
		Statuses: a.statuses, Problems: a.problems}
}
