package lab

import (
	"strings"
	"testing"
	"time"
)

func TestTimeAxis(t *testing.T) {
	for _, tc := range []struct {
		total time.Duration
		axis  time.Duration
		ticks string
	}{
		{350 * time.Millisecond, 400 * time.Millisecond, "0 100 200 300 400 ms"},
		{7 * time.Millisecond, 8 * time.Millisecond, "0 2 4 6 8 ms"},
		{3020 * time.Millisecond, 4 * time.Second, "0 1 2 3 4 s"},
		{9 * time.Second, 10 * time.Second, "0 2.5 5 7.5 10 s"},
	} {
		axis, ticks := timeAxis(tc.total)
		var labels []string
		for _, tk := range ticks {
			labels = append(labels, tk.Label)
		}
		if got := strings.Join(labels, " "); axis != tc.axis || got != tc.ticks {
			t.Errorf("run of %v: got axis %v with ticks %q, want %v with %q", tc.total, axis, got, tc.axis, tc.ticks)
		}
	}
}
