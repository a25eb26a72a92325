package hapg

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// WaitStable waits until the formation is back to normal: one node primary
// and the others secondary, all reached and assigned, all healthy and
// running, the primary taking a write, and every standby streaming (in the
// quorum, with Sync) and having flushed all the WAL the primary had
// flushed when the check began. After a failover, that is once the old
// primary has rejoined as a standby. When it returns, every commit the
// primary acknowledged before WaitStable was called is on every standby's
// disk too.
//
// That last condition is checked on PostgreSQL itself, not taken from the
// monitor: once, the sync test lost 16,397 acknowledged commits, by their
// number those the primary had acknowledged alone while the standby was
// away, though the monitor already had both nodes back as primary and
// secondary (docs/ha.md).
func (f *Formation) WaitStable(ctx context.Context) error {
	var last []NodeState
	var lastErr error
	for {
		states, err := f.State(ctx)
		if err == nil {
			last = states
			if p := stablePrimary(states); p != "" && len(states) == len(f.nodes) {
				n, err := f.node(p)
				if err != nil {
					return err
				}
				if lastErr = f.standbysHaveWrite(ctx, n); lastErr == nil {
					return nil
				}
			}
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for a stable formation: %w (monitor: %s; last error: %v)", ctx.Err(), describe(last), lastErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// standbysHaveWrite checks, on primary, that it takes a write and that
// every standby streams and has flushed all the WAL primary had flushed
// before the write, where every commit acknowledged until then ends (and,
// with Sync, counts for the quorum).
func (f *Formation) standbysHaveWrite(ctx context.Context, primary *Node) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, primary.URL("postgres"))
	if err != nil {
		return fmt.Errorf("write on %s: %w", primary.name, err)
	}
	defer conn.Close(context.Background())
	var flushed string
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn()::text").Scan(&flushed); err != nil {
		return fmt.Errorf("WAL position of %s: %w", primary.name, err)
	}
	if err := probeWrite(ctx, conn); err != nil {
		return fmt.Errorf("write on %s: %w", primary.name, err)
	}
	var caughtUp int
	err = conn.QueryRow(ctx, `
		SELECT count(*) FROM pg_stat_replication
		 WHERE state = 'streaming' AND flush_lsn >= $1::pg_lsn
		   AND (NOT $2 OR sync_state IN ('sync', 'quorum'))`, flushed, f.opts.Sync).Scan(&caughtUp)
	if err != nil {
		return fmt.Errorf("replication from %s: %w", primary.name, err)
	}
	if want := len(f.nodes) - 1; caughtUp < want {
		return fmt.Errorf("%d of the %d standbys of %s have flushed %s", caughtUp, want, primary.name, flushed)
	}
	return nil
}

// stablePrimary returns the primary's name if states are one stable
// primary and the others stable secondaries, and "" otherwise.
func stablePrimary(states []NodeState) string {
	if len(states) < 2 {
		return ""
	}
	var primary string
	secondaries := 0
	for _, s := range states {
		if !s.Healthy || !s.Running || s.Reported != s.Assigned {
			return ""
		}
		switch s.Reported {
		case "primary":
			primary = s.Name
		case "secondary":
			secondaries++
		}
	}
	if secondaries != len(states)-1 {
		return ""
	}
	return primary
}

func describe(states []NodeState) string {
	if states == nil {
		return "unknown"
	}
	parts := make([]string, len(states))
	for i, s := range states {
		parts[i] = s.String()
	}
	return strings.Join(parts, "; ")
}

// probeTimeout bounds one attempt at a write: a commit can wait for a
// synchronous standby that is gone, until the monitor notices.
const probeTimeout = 2 * time.Second

// acceptsWrites commits a transaction that writes WAL on n, on a connection
// of its own.
func acceptsWrites(ctx context.Context, n *Node) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, n.URL("postgres"))
	if err != nil {
		return fmt.Errorf("write on %s: %w", n.name, err)
	}
	defer conn.Close(context.Background())
	if err := probeWrite(ctx, conn); err != nil {
		return fmt.Errorf("write on %s: %w", n.name, err)
	}
	return nil
}

// probeWrite commits a transaction that writes WAL and leaves nothing
// behind: a temporary table's catalog rows are logged, so its commit waits
// for a synchronous standby as any other would.
func probeWrite(ctx context.Context, conn *pgx.Conn) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "CREATE TEMPORARY TABLE hapg_probe () ON COMMIT DROP")
		return err
	})
}

// waitNewPrimary waits until the monitor has a node other than old as
// primary and that node takes a write, and returns it. With two standbys
// the monitor chooses which to promote: the one with the most WAL, or
// either.
func (f *Formation) waitNewPrimary(ctx context.Context, old *Node) (*Node, error) {
	var lastErr error
	for {
		p, err := f.Primary(ctx)
		switch {
		case err != nil:
			lastErr = err
		case p == old:
			lastErr = fmt.Errorf("the monitor has %s as primary", p.name)
		default:
			if lastErr = acceptsWrites(ctx, p); lastErr == nil {
				return p, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for a new primary: %w (last: %v)", ctx.Err(), lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
