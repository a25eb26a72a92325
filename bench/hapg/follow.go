package hapg

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Follow writes a line to w each time the monitor's view of a node
// changes (its states, health, or whether it runs; not its LSN, which
// moves with every commit), until ctx is done, so that a person or a
// harness can see failovers as they happen.
func (f *Formation) Follow(ctx context.Context, w io.Writer) {
	last := map[string]string{}
	for {
		if states, err := f.State(ctx); err == nil {
			for _, s := range states {
				line := fmt.Sprintf("%s %s/%s healthy=%v running=%v", s.Name, s.Reported, s.Assigned, s.Healthy, s.Running)
				if last[s.Name] != line {
					fmt.Fprintf(w, "%s %s\n", time.Now().Format("15:04:05.000"), line)
					last[s.Name] = line
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}
