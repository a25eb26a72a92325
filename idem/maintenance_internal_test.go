package idem

import (
	"testing"
	"time"
)

// Zero is the default interval; below zero turns that service off, so an
// instance can run the completer without the sweeper, or neither.
func TestMaintainTurnsAServiceOff(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		complete, sweep           time.Duration
		wantComplete, wantSweeper time.Duration // 0: not run
	}{
		{"defaults", 0, 0, 10 * time.Second, time.Minute},
		{"set", time.Second, time.Hour, time.Second, time.Hour},
		{"no completer", -1, 0, 0, time.Minute},
		{"no sweeper", 0, -time.Second, 10 * time.Second, 0},
		{"neither", -1, -1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Maintenance{Store: &Store{}, CompleteEvery: tc.complete, SweepEvery: tc.sweep,
				Services: []Service{{Name: "reconciler", Every: time.Second}}}
			runs := map[string]time.Duration{}
			for _, s := range m.services() {
				if s.Every > 0 { // what StartMaintainer starts
					runs[s.Name] = s.Every
				}
			}
			want := map[string]time.Duration{"reconciler": time.Second}
			if tc.wantComplete > 0 {
				want["completer"] = tc.wantComplete
			}
			if tc.wantSweeper > 0 {
				want["sweeper"] = tc.wantSweeper
			}
			if len(runs) != len(want) {
				t.Fatalf("got the services %v, want %v", runs, want)
			}
			for name, every := range want {
				if runs[name] != every {
					t.Errorf("got the services %v, want %v", runs, want)
				}
			}
		})
	}
}
