package chaos

import (
	"testing"
	"time"
)

// A request is heard by a shop only if the shop was neither paused nor
// down from its sending until the client gave up on it.
func TestProcessHearsOnlyWhileRunning(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	p := &process{name: "web-0", deaf: []window{{from: at(10), to: at(26)}}}
	for _, c := range []struct {
		from, to float64
		want     bool
	}{
		{0, 5, true},    // before the pause
		{8, 13, false},  // paused while it waited
		{12, 17, false}, // sent to the paused shop
		{24, 29, false}, // resumed only after it was sent
		{27, 32, true},  // after
	} {
		if got := p.heard(at(c.from), at(c.to)); got != c.want {
			t.Errorf("request from %gs to %gs: heard %v, want %v", c.from, c.to, got, c.want)
		}
	}
	p.deafSince = at(40) // killed, not serving again yet
	if p.heard(at(41), at(46)) || !p.heard(at(30), at(35)) {
		t.Error("a shop down since 40 s: want requests after it unheard, and those before heard")
	}
}
