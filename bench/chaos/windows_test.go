package chaos

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHaltedBySMTP: an SMTP stall during which orders were answered at
// under half the rate expected is reported; only its part clear of the
// disturbing disruptions (and disturbedTail after each) is judged, and
// only when that part is long enough.
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
		"10.0 s to 20.0 s (10.0 s of it undisturbed): 0 orders answered, 0.0 a second; 10.0 expected",
		"65.0 s to 80.0 s (9.0 s of it undisturbed): 0 orders answered, 0.0 a second; 10.0 expected",
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

// TestHaltedShare: a stall at 40% of the rate expected halted orders (a
// mail worker that holds the pool gave a fifth to a third); one at 60%
// did not.
func TestHaltedShare(t *testing.T) {
	t.Parallel()
	began := time.Now()
	var created []time.Time
	for ms := 0; ms < 10_000; ms += 250 { // 4 a second over 0-10 s
		created = append(created, began.Add(time.Duration(ms)*time.Millisecond))
	}
	for ms := 10_000; ms < 20_000; ms += 1000 / 6 { // 6 a second over 10-20 s
		created = append(created, began.Add(time.Duration(ms)*time.Millisecond))
	}
	ws := []window{
		{kind: windowSMTPStall, from: began, to: began.Add(10 * time.Second)},
		{kind: windowSMTPStall, from: began.Add(10 * time.Second), to: began.Add(20 * time.Second)},
	}
	halted := haltedBySMTP(ws, began, created, 10)
	if len(halted) != 1 || !strings.HasPrefix(halted[0], "0.0 s to 10.0 s") {
		t.Errorf("got halted %q, want the stall at 4 a second only", halted)
	}
}

// TestClearRate: the rate outside the disturbing windows leaves out those
// and their tails, a paused shop's as a crash's.
func TestClearRate(t *testing.T) {
	t.Parallel()
	began := time.Now()
	at := func(s int) time.Time { return began.Add(time.Duration(s) * time.Second) }
	var created []time.Time
	for s := range 50 {
		if s < 10 || (s >= 25 && s < 30) || s >= 41 { // none during the crash, the shop stall and their tails
			created = append(created, at(s), at(s))
		}
	}
	ws := []window{
		{kind: windowDBCrash, from: at(10), to: at(20)},
		{kind: windowShopStall, from: at(30), to: at(36)},
		{kind: windowSMTPStall, from: at(0), to: at(5)},
	}
	if got := clearRate(ws, began, at(50), created); got != 2 {
		t.Errorf("got %.2f a second, want 2 (the 24 s undisturbed)", got)
	}
	if got := expectedRate(100, 50*time.Second, 3); got != 2 {
		t.Errorf("expected rate: got %.2f, want the pace, 2", got)
	}
	if got := expectedRate(300, 50*time.Second, 3); got != 3 {
		t.Errorf("expected rate: got %.2f, want the clear rate, 3, below the pace", got)
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

// The longest outage is the longest span without a 201, and counts only
// the answers given inside it.
func TestLongestOutage(t *testing.T) {
	began := time.Unix(1000, 0)
	at := func(s float64) time.Time { return began.Add(time.Duration(s * float64(time.Second))) }
	resp := func(code int) *http.Response { return &http.Response{StatusCode: code, Header: http.Header{}} }
	created := []time.Time{at(1), at(9), at(2), at(10)} // out of order, as goroutines append
	answers := []answered{{at: at(1.5), resp: resp(503)}, {at: at(3), resp: resp(503)}, {at: at(5)}, {at: at(9.5), resp: resp(409)}}
	o := longestOutage(began, at(12), created, answers)
	if o.FromSeconds != 2 || o.Seconds != 7 {
		t.Errorf("got %.1f s from %.1f s, want 7 s from 2 s", o.Seconds, o.FromSeconds)
	}
	if o.Statuses["503"] != 1 || o.Statuses[noAnswer] != 1 || o.Statuses["409"] != 0 {
		t.Errorf("answers within: got %v, want one 503 and one none", o.Statuses)
	}
}
