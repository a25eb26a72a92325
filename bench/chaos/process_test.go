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

// An answer shows that a shop heard a request, but a paused shop heard it
// only once it ran again; a shop still down has heard nothing yet.
func TestProcessHeardFromTheEndOfAPause(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	p := &process{name: "web-0", deaf: []window{{from: at(10), to: at(26)}}, deafSince: at(40)}
	for _, c := range []struct {
		sent float64
		want time.Time
	}{
		{5, at(5)},        // running: heard when sent
		{12, at(26)},      // paused: heard when it ran again
		{30, at(30)},      // after the pause
		{41, time.Time{}}, // down since 40 s: not heard yet
	} {
		if got := p.heardFrom(at(c.sent)); !got.Equal(c.want) {
			t.Errorf("a request sent at %gs: heard from %v, want %v", c.sent, got.Sub(t0), c.want.Sub(t0))
		}
	}
}

// The long chaos run of 7 December: a retrying client's last request went
// to a shop paused until after the completer took its key over, and was
// answered once the shop ran again. It is heard from then, not from its
// sending, so the completer did not break its grace.
func TestAnsweredAfterAPauseIsHeardWhenTheShopRan(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	paused := &process{name: "web-2", addr: "127.0.0.1:2", deaf: []window{{from: at(229), to: at(245)}}}
	cl := &cluster{shops: []*process{paused}}
	c := &Clients{heard: cl.heard, heardFrom: cl.heardFrom}
	answered := tried{sent: at(240.1), answered: at(245.1), shop: paused.addr, status: 402}
	if got := c.heardAt(answered); !got.Equal(at(245)) {
		t.Errorf("answered after the pause: heard at %v, want 245 s", got.Sub(t0))
	}
	lost := tried{sent: at(235), answered: at(240), shop: paused.addr}
	if got := c.heardAt(lost); !got.IsZero() {
		t.Errorf("unanswered, sent to the paused shop: heard at %v, want never", got.Sub(t0))
	}
	running := tried{sent: at(250), answered: at(255), shop: paused.addr}
	if got := c.heardAt(running); !got.Equal(at(250)) {
		t.Errorf("unanswered, sent to the running shop: heard at %v, want 250 s", got.Sub(t0))
	}
}
