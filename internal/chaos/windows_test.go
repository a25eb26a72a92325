package chaos

import (
	"testing"
	"time"
)

// TestHaltedBySMTP: an SMTP stall during which orders were answered at
// under a quarter of the drive's rate is reported, unless it met an
// outage of the database or was too short to judge.
func TestHaltedBySMTP(t *testing.T) {
	t.Parallel()
	began := time.Now()
	at := func(s float64) time.Time { return began.Add(time.Duration(s * float64(time.Second))) }
	// Ten 201s a second over 0-60 s, but for none from 10 s to 20 s and
	// from 40 s to 50 s.
	var created []time.Time
	for ms := 0; ms < 60_000; ms += 100 {
		if (ms >= 10_000 && ms < 20_000) || (ms >= 40_000 && ms < 50_000) {
			continue
		}
		created = append(created, at(float64(ms)/1000))
	}
	ws := windowReports([]window{
		{kind: windowSMTPStall, from: at(40), to: at(50)}, // halted, but PostgreSQL was stopped
		{kind: windowDBStall, from: at(45), to: at(57)},
		{kind: windowSMTPStall, from: at(10), to: at(20)},   // halted
		{kind: windowSMTPStall, from: at(25), to: at(35)},   // full speed
		{kind: windowSMTPStall, from: at(15), to: at(15.5)}, // too short to judge
	}, began, created)
	if ws[0].From != 10 || ws[0].Created != 0 || ws[2].Kind != windowSMTPStall || ws[2].Created != 100 || ws[2].PerSecond != 10 {
		t.Fatalf("got windows %+v; want them in order of start, with the 201s of each", ws)
	}
	halted := haltedBySMTP(ws, 10)
	if len(halted) != 1 || halted[0] != "10.0 s to 20.0 s: 0 orders answered (0.0 a second; the drive's rate 10.0)" {
		t.Errorf("got halted %q, want the stall from 10 s to 20 s only", halted)
	}
}
