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

// haltedShare is the rate of orders, as a share of the drive's, below which
// an SMTP stall counts as having halted them. Confirmation mail is sent by
// the outbox after the order is answered; a stalled mail server should
// slow orders not at all, and a quarter leaves room for a loaded machine
// and the other disruptions of the moment.
const haltedShare = 0.25

// outageTail is how long after an outage of the database its effects are
// still taken for its own: the pools reconnect, and a client's request sent
// during the outage may wait out its timeout (5 s) before it retries.
const outageTail = 5 * time.Second

// haltedBySMTP returns the SMTP stalls during which orders were answered at
// under haltedShare of the drive's rate. Only the part of a stall that met
// no outage of the database (a crash or a SIGSTOP of PostgreSQL, and
// outageTail after it), which halts orders by itself, is judged, and only
// when it is long enough (3 s) to expect a few orders (8 at the drive's
// rate).
func haltedBySMTP(ws []window, began time.Time, created []time.Time, driveRate float64) []string {
	var outages []window
	for _, w := range ws {
		if w.kind == windowDBCrash || w.kind == windowDBStall {
			outages = append(outages, window{kind: w.kind, from: w.from, to: w.to.Add(outageTail)})
		}
	}
	var halted []string
	for _, w := range ws {
		if w.kind != windowSMTPStall {
			continue
		}
		judged := subtract(w, outages)
		var secs float64
		n := 0
		for _, part := range judged {
			secs += part.to.Sub(part.from).Seconds()
			c, _ := createdIn(created, part.from, part.to)
			n += c
		}
		if secs < 3 || secs*driveRate < 8 {
			continue
		}
		if rate := float64(n) / secs; rate < haltedShare*driveRate {
			halted = append(halted, fmt.Sprintf("%.1f s to %.1f s (%.1f s of it without a database outage): %d orders answered, %.1f a second; the drive's rate %.1f",
				w.from.Sub(began).Seconds(), w.to.Sub(began).Seconds(), secs, n, rate, driveRate))
		}
	}
	return halted
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
