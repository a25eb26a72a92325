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

// haltedBySMTP returns the SMTP stall windows during which orders were
// answered at under haltedShare of the drive's rate, skipping those that
// met an outage of the database (a crash or a SIGSTOP of PostgreSQL), which
// halts orders by itself. Only a window long enough to expect a few orders
// is judged.
func haltedBySMTP(ws []Window, driveRate float64) []string {
	var halted []string
	for _, w := range ws {
		if w.Kind != windowSMTPStall || (w.To-w.From)*driveRate < 8 {
			continue
		}
		met := slices.ContainsFunc(ws, func(o Window) bool {
			return (o.Kind == windowDBCrash || o.Kind == windowDBStall) && o.From < w.To && w.From < o.To
		})
		if met || w.PerSecond >= haltedShare*driveRate {
			continue
		}
		halted = append(halted, fmt.Sprintf("%.1f s to %.1f s: %d orders answered (%.1f a second; the drive's rate %.1f)",
			w.From, w.To, w.Created, w.PerSecond, driveRate))
	}
	return halted
}
