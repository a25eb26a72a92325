package hapg

import (
	"context"
	"fmt"
	"time"
)

// Event is one of the monitor's events (pgautofailover.event): a node's
// state reported or assigned, with the monitor's description of why.
type Event struct {
	At                 time.Time
	Node               string
	Reported, Assigned string
	Description        string
}

func (e Event) String() string {
	return fmt.Sprintf("%s %s %s/%s: %s", e.At.Format("15:04:05.000"), e.Node, e.Reported, e.Assigned, e.Description)
}

// Events returns the monitor's events since since, oldest first: what a
// harness reads after a run to say what the formation went through, such
// as a primary that committed alone (wait_primary) because the monitor
// took its standby for failed.
func (f *Formation) Events(ctx context.Context, since time.Time) ([]Event, error) {
	rows, err := f.pool.Query(ctx, `
		SELECT eventtime, nodename, reportedstate::text, goalstate::text, description
		FROM pgautofailover.event WHERE eventtime >= $1 ORDER BY eventid`, since)
	if err != nil {
		return nil, fmt.Errorf("monitor events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.At, &e.Node, &e.Reported, &e.Assigned, &e.Description); err != nil {
			return nil, fmt.Errorf("monitor events: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
