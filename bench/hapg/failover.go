package hapg

import (
	"context"
	"fmt"
	"time"
)

// Failover has the monitor fail over (pg_autoctl perform failover): the
// primary drains and is demoted, its standby is promoted, and the old
// primary rejoins as the new one's standby. It returns the new primary
// once it takes a write, which is before the old primary has rejoined; call
// WaitStable for that.
func (f *Formation) Failover(ctx context.Context) (*Node, error) {
	n, err := f.failover(ctx)
	if err != nil {
		return nil, fmt.Errorf("failover: %w", err)
	}
	return n, nil
}

func (f *Formation) failover(ctx context.Context) (*Node, error) {
	old, err := f.Primary(ctx)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	if err := f.monitor.autoctl(ctx, "perform", "failover", "--pgdata", f.monitor.pgdata()); err != nil {
		return nil, err
	}
	next, err := f.waitNewPrimary(ctx, old)
	if err != nil {
		return nil, err
	}
	f.logf("failed over from %s to %s in %s", old.name, next.name, time.Since(began).Round(time.Millisecond))
	return next, nil
}

// Other returns the first data node that is not n: of two, the standby of
// a primary, or the primary of a standby; of three, one of a primary's
// standbys (Standbys returns both).
func (f *Formation) Other(n *Node) *Node {
	if f.nodes[0] == n {
		return f.nodes[1]
	}
	return f.nodes[0]
}

// Others returns the data nodes that are not n: a primary's standbys.
func (f *Formation) Others(n *Node) []*Node {
	var others []*Node
	for _, o := range f.nodes {
		if o != n {
			others = append(others, o)
		}
	}
	return others
}
