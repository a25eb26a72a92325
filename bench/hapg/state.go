package hapg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// NodeState is what the monitor knows of a data node.
type NodeState struct {
	Name string
	Port int
	// Reported is the state the node's keeper last reported (primary,
	// secondary, wait_primary, catchingup, draining, ...); Assigned is the
	// one the monitor asks it to reach. They differ while it moves.
	Reported, Assigned string
	// TLI and LSN are the timeline and WAL position the keeper last
	// reported: the current flush position on a primary, the received (or
	// replayed) one on a standby.
	TLI int
	LSN string
	// Healthy is the monitor's last health check (a connection to the
	// node) having succeeded; Running is the keeper's last report saying
	// PostgreSQL runs.
	Healthy, Running bool
	// ReportedAt is when the keeper last reported.
	ReportedAt time.Time
	// Quorum is the node's replication-quorum property: as a standby it
	// counts for synchronous commits.
	Quorum bool
}

func (s NodeState) String() string {
	health := "healthy"
	if !s.Healthy {
		health = "unhealthy"
	}
	if !s.Running {
		health += ", not running"
	}
	return fmt.Sprintf("%s :%d %s/%s %d:%s %s", s.Name, s.Port, s.Reported, s.Assigned, s.TLI, s.LSN, health)
}

// primaryStates are the states in which pg_auto_failover lets a node take
// writes.
var primaryStates = []string{"single", "wait_primary", "primary", "join_primary", "apply_settings"}

// ErrNoPrimary is returned by Primary while no node is a primary, as during
// a failover.
var ErrNoPrimary = errors.New("no primary")

// State returns the monitor's view of the data nodes, node1 first.
func (f *Formation) State(ctx context.Context) ([]NodeState, error) {
	rows, err := f.pool.Query(ctx, `
		SELECT nodename, nodeport, reportedstate::text, goalstate::text, reportedtli,
		       reportedlsn::text, health = 1, reportedpgisrunning, reporttime, replicationquorum
		  FROM pgautofailover.node
		 WHERE formationid = $1 AND groupid = $2
		 ORDER BY nodename`, formationName, groupID)
	if err != nil {
		return nil, fmt.Errorf("formation state: %w", err)
	}
	states, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (NodeState, error) {
		var s NodeState
		err := row.Scan(&s.Name, &s.Port, &s.Reported, &s.Assigned, &s.TLI, &s.LSN, &s.Healthy, &s.Running, &s.ReportedAt, &s.Quorum)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("formation state: %w", err)
	}
	return states, nil
}

// Primary returns the node the monitor has as primary: one that reached a
// state in which it takes writes and is asked to stay in one. After a node
// dies the monitor keeps it as primary until it has declared it failed, so
// this is not proof that the node is up.
func (f *Formation) Primary(ctx context.Context) (*Node, error) {
	states, err := f.State(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range states {
		if slices.Contains(primaryStates, s.Reported) && slices.Contains(primaryStates, s.Assigned) {
			return f.node(s.Name)
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNoPrimary, describe(states))
}

func (f *Formation) node(name string) (*Node, error) {
	for _, n := range f.nodes {
		if n.name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("the monitor knows a node %q, which is not of this formation", name)
}
