package chaos

import (
	"fmt"
	"slices"
	"time"
)

// The kinds of disruption a window can be of.
const (
	windowShopStall = "shop SIGSTOP"
	windowDBCrash   = "PostgreSQL crash"
	windowDBStall   = "PostgreSQL SIGSTOP"
	windowRowLock   = "row lock"
	windowSMTPStall = "SMTP stall"
)

// window is a span of the drive during which one disruption was in effect.
type window struct {
	kind     string
	from, to time.Time
}

// Window is a disruption's span in the report, with the orders the
// clients were given meanwhile, to hold against the drive's rate.
type Window struct {
	Kind string `json:"kind"`
	// From and To are seconds since the drive began.
	From float64 `json:"from_seconds"`
	To   float64 `json:"to_seconds"`
	// Created is how many 201s the clients got to orders meanwhile.
	Created   int     `json:"created"`
	PerSecond float64 `json:"created_per_second"`
}

// windowReports says what the clients got during each window, in the order
// the windows began.
func windowReports(ws []window, began time.Time, created []time.Time) []Window {
	ws = slices.Clone(ws)
	slices.SortFunc(ws, func(a, b window) int { return a.from.Compare(b.from) })
	out := make([]Window, 0, len(ws))
	for _, w := range ws {
		n, rate := createdIn(created, w.from, w.to)
		out = append(out, Window{Kind: w.kind, From: w.from.Sub(began).Seconds(), To: w.to.Sub(began).Seconds(),
			Created: n, PerSecond: rate})
	}
	return out
}

// createdIn counts the 201s answered in [from, to) and their rate.
func createdIn(created []time.Time, from, to time.Time) (int, float64) {
	n := 0
	for _, t := range created {
		if !t.Before(from) && t.Before(to) {
			n++
		}
	}
	secs := to.Sub(from).Seconds()
	if secs <= 0 {
		return n, 0
	}
	return n, float64(n) / secs
}

// haltedShare is the rate of orders, as a share of the rate expected,
// below which an SMTP stall counts as having halted them. Confirmation
// mail is sent by the outbox after the order is answered: a stalled mail
// server should slow orders not at all. Measured in short runs (5 s
// stalls), a mail worker that held its transaction while it sent (and so
// the pool: 4 connections for 16 workers) left orders at a fifth to a half
// of the clients' pace (0.19 to 0.46 in seven runs); one that sends
// outside it, at the full pace (0.96 to 1.18 in five). Half leaves room
// for a loaded machine, a kill and a row lock of the moment.
const haltedShare = 0.5

// disturbedTail is how long after a disturbing disruption (an outage of
// the database, a paused shop) its effects are still taken for its own:
// the pools reconnect, and a client's request sent meanwhile may wait out
// its timeout (5 s) before it retries.
const disturbedTail = 5 * time.Second

// disturbancesOf returns the windows among ws that halt or slow orders by
// themselves (a crash or a SIGSTOP of PostgreSQL, a shop's SIGSTOP), each
// with its tail.
func disturbancesOf(ws []window) []window {
	var out []window
	for _, w := range ws {
		switch w.kind {
		case windowDBCrash, windowDBStall, windowShopStall, windowFailover, windowSwitchover, windowPrimaryKill, windowStandbyStop,
			windowPartitionDB, windowPartitionDBOut, windowPartitionDBIn, windowPartitionProvider, windowPartitionProvIn,
			windowPartitionWebhooks, windowLossyLink:
			out = append(out, window{kind: w.kind, from: w.from, to: w.to.Add(disturbedTail)})
		}
	}
	return out
}

// createdOutside counts the 201s answered during the parts of w that none
// of cut covers, and how long those parts are.
func createdOutside(w window, cut []window, created []time.Time) (n int, seconds float64) {
	for _, part := range subtract(w, cut) {
		seconds += part.to.Sub(part.from).Seconds()
		c, _ := createdIn(created, part.from, part.to)
		n += c
	}
	return n, seconds
}

// clearRate is the rate of 201s from began to end outside the disturbing
// windows and their tails.
func clearRate(ws []window, began, end time.Time, created []time.Time) float64 {
	n, secs := createdOutside(window{from: began, to: end}, disturbancesOf(ws), created)
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

// haltedBySMTP returns the SMTP stalls during which orders were answered at
// under haltedShare of expected, a rate a second. Only the part of a stall
// clear of the disturbing windows (see disturbancesOf), which slow orders
// by themselves, is judged, and only when it is long enough (3 s) to
// expect a few orders (8).
func haltedBySMTP(ws []window, began time.Time, created []time.Time, expected float64) []string {
	cut := disturbancesOf(ws)
	var halted []string
	for _, w := range ws {
		if w.kind != windowSMTPStall {
			continue
		}
		n, secs := createdOutside(w, cut, created)
		if secs < 3 || secs*expected < 8 {
			continue
		}
		if r := float64(n) / secs; r < haltedShare*expected {
			halted = append(halted, fmt.Sprintf("%.1f s to %.1f s (%.1f s of it undisturbed): %d orders answered, %.1f a second; %.1f expected",
				w.from.Sub(began).Seconds(), w.to.Sub(began).Seconds(), secs, n, r, expected))
		}
	}
	return halted
}

// expectedRate is the rate of 201s an SMTP stall is held to: the clients'
// pace (checkouts over the drive), or the rate in the drive's undisturbed
// parts if the machine could not keep that pace.
func expectedRate(checkouts int, drive time.Duration, clear float64) float64 {
	return min(float64(checkouts)/drive.Seconds(), clear)
}

// subtract returns the parts of w that none of cut covers, in order.
func subtract(w window, cut []window) []window {
	parts := []window{w}
	for _, c := range cut {
		var next []window
		for _, p := range parts {
			if !c.from.Before(p.to) || !p.from.Before(c.to) {
				next = append(next, p) // no overlap
				continue
			}
			if p.from.Before(c.from) {
				next = append(next, window{kind: p.kind, from: p.from, to: c.from})
			}
			if c.to.Before(p.to) {
				next = append(next, window{kind: p.kind, from: c.to, to: p.to})
			}
		}
		parts = next
	}
	slices.SortFunc(parts, func(a, b window) int { return a.from.Compare(b.from) })
	return parts
}
