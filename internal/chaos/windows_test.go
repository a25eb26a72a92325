package chaos

import (
	"testing"
	"time"
)

// TestHaltedBySMTP: an SMTP stall during which orders were answered at
// under a quarter of the drive's rate is reported; only its part without a
// database outage (and outageTail after one) is judged, and only when
// that part is long enough.
func TestHaltedBySMTP(t *testing.T) {
	t.Parallel()
	began := time.Now()
	at := func(s float64) time.Time { return began.Add(time.Duration(s * float64(time.Second))) }
	// Ten 201s a second over 0-90 s, but for none from 10 s to 20 s, from
	// 40 s to 50 s and from 70 s to 80 s.
	var created []time.Time
	for ms := 0; ms < 90_000; ms += 100 {
		if (ms >= 10_000 && ms < 20_000) || (ms >= 40_000 && ms < 50_000) || (ms >= 70_000 && ms < 80_000) {
			continue
		}
		created = append(created, at(float64(ms)/1000))
	}
	ws := []window{
		{kind: windowSMTPStall, from: at(10), to: at(20)},   // halted
		{kind: windowSMTPStall, from: at(25), to: at(35)},   // full speed
		{kind: windowSMTPStall, from: at(40), to: at(50)},   // halted, but PostgreSQL was stopped
		{kind: windowDBStall, from: at(39), to: at(49)},     // and for 5 s after
		{kind: windowSMTPStall, from: at(15), to: at(15.5)}, // too short to judge
		{kind: windowSMTPStall, from: at(65), to: at(80)},   // halted after the crash's tail (71 s)
		{kind: windowDBCrash, from: at(60), to: at(66)},
	}
	got := haltedBySMTP(ws, began, created, 10)
	want := []string{
		"10.0 s to 20.0 s (10.0 s of it without a database outage): 0 orders answered, 0.0 a second; the drive's rate 10.0",
		"65.0 s to 80.0 s (9.0 s of it without a database outage): 0 orders answered, 0.0 a second; the drive's rate 10.0",
	}
	if len(got) != len(want) {
		t.Fatalf("got halted %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %q, want %q", got[i], want[i])
		}
	}
}

func TestSubtract(t *testing.T) {
	t.Parallel()
	began := time.Now()
	at := func(s int) time.Time { return began.Add(time.Duration(s) * time.Second) }
	parts := subtract(window{from: at(0), to: at(10)}, []window{{from: at(2), to: at(3)}, {from: at(8), to: at(12)}, {from: at(-5), to: at(1)}})
	want := [][2]int{{1, 2}, {3, 8}}
	if len(parts) != len(want) {
		t.Fatalf("got %d parts, want %v", len(parts), want)
	}
	for i, p := range parts {
		if !p.from.Equal(at(want[i][0])) || !p.to.Equal(at(want[i][1])) {
			t.Errorf("part %d: got %s to %s, want %d s to %d s", i, p.from.Sub(began), p.to.Sub(began), want[i][0], want[i][1])
		}
	}
}

// TestWindowReports: windows are reported in the order they began, with
// the 201s answered in each.
func TestWindowReports(t *testing.T) {
	t.Parallel()
	began := time.Now()
	at := func(s int) time.Time { return began.Add(time.Duration(s) * time.Second) }
	created := []time.Time{at(1), at(2), at(5)}
	ws := windowReports([]window{{kind: windowRowLock, from: at(4), to: at(6)}, {kind: windowSMTPStall, from: at(0), to: at(4)}}, began, created)
	if len(ws) != 2 || ws[0].Kind != windowSMTPStall || ws[0].Created != 2 || ws[0].PerSecond != 0.5 || ws[1].Created != 1 || ws[1].From != 4 {
		t.Errorf("got %+v", ws)
	}
}
