package database

import (
	"context"
	"fmt"
)

// Replication is the database's place in a replicated setup, and how long
// a commit the shop has acknowledged survives there. A standby (in
// recovery) refuses every write, as a primary does for a moment after a
// failover demotes it. Durability matters to exactly-once because a key
// row is committed before its provider call: a key row lost to a failover
// makes the client's retry a new operation with a new provider key, so a
// second charge. A standby that confirms every commit before it is
// acknowledged (synchronous replication) loses nothing when it is
// promoted; one that streams asynchronously can lose the last commits.
type Replication struct {
	InRecovery bool
	// SynchronousCommit is the shop's synchronous_commit: "on" (or
	// remote_apply, remote_write) waits for the synchronous standbys,
	// "local" does not, "off" does not even wait for the local disk.
	SynchronousCommit string
	// SyncStandbyNames is synchronous_standby_names: empty means no
	// commit waits for a standby.
	SyncStandbyNames string
	// Standbys stream from this server; SyncStandbys of them confirm
	// commits (sync_state sync or quorum), or -1 when this role may not
	// see sync_state (that needs pg_read_all_stats; the rows themselves
	// are shown to any role).
	Standbys, SyncStandbys int
	// RequireSync is the database's REQUIRE_SYNC_REPLICA policy
	// (durability_policy, migrations 00070 and 00140): while it is on, the
	// database refuses to commit a key when no synchronous standby is
	// named or the session's synchronous_commit is local or off.
	RequireSync bool
}

// ReplicationState reads the server's role, its replication settings, its
// streaming standbys and the shop's durability policy in one statement.
func (d *DB) ReplicationState(ctx context.Context) (Replication, error) {
	var r Replication
	var hidden bool
	err := d.Pool.QueryRow(ctx, `SELECT pg_is_in_recovery(), current_setting('synchronous_commit'),
		current_setting('synchronous_standby_names'), count(*)::int,
		count(*) FILTER (WHERE sync_state IN ('sync', 'quorum'))::int, coalesce(bool_or(sync_state IS NULL), false),
		coalesce((SELECT require_sync FROM durability_policy), false)
		FROM pg_stat_replication WHERE state = 'streaming'`).Scan(
		&r.InRecovery, &r.SynchronousCommit, &r.SyncStandbyNames, &r.Standbys, &r.SyncStandbys, &hidden, &r.RequireSync)
	if err != nil {
		return Replication{}, fmt.Errorf("replication state: %w", err)
	}
	if hidden {
		r.SyncStandbys = -1
	}
	return r, nil
}

// waitsForStandby reports whether synchronous_commit makes a commit wait
// for the synchronous standbys (when there are any).
func (r Replication) waitsForStandby() bool {
	switch r.SynchronousCommit {
	case "on", "remote_apply", "remote_write":
		return true
	}
	return false
}

// Synchronous reports whether a standby confirms every commit before the
// shop is told it committed: a failover to it loses nothing acknowledged.
func (r Replication) Synchronous() bool {
	if r.SyncStandbyNames == "" || !r.waitsForStandby() {
		return false
	}
	if r.SyncStandbys < 0 {
		return r.Standbys > 0
	}
	return r.SyncStandbys > 0
}

// Risk says how an acknowledged key could be lost, or is empty when a
// crash or a failover cannot lose one: a single server with synchronous
// commit, or a synchronous standby.
func (r Replication) Risk() string {
	switch {
	case r.SynchronousCommit == "off":
		return "synchronous_commit is off: a commit is acknowledged before it is on disk, and a crash can lose it"
	case r.Standbys > 0 && (r.SyncStandbyNames == "" || !r.waitsForStandby()):
		return fmt.Sprintf("%d standby streams asynchronously: a failover to it can lose keys the shop acknowledged, and a retry would charge again", r.Standbys)
	}
	return ""
}

// Describe says in a few words where the server stands, for the readiness
// report and the start-up log.
func (r Replication) Describe() string {
	switch {
	case r.Risk() != "":
		return r.Risk()
	case r.Synchronous():
		return fmt.Sprintf("synchronous: %s confirms every commit (synchronous_commit %s, synchronous_standby_names %q)",
			standbysConfirming(r), r.SynchronousCommit, r.SyncStandbyNames)
	case r.SyncStandbyNames != "" && r.waitsForStandby():
		return fmt.Sprintf("no synchronous standby connected: commits wait for one (synchronous_standby_names %q)", r.SyncStandbyNames)
	}
	return "single server: no standby to fail over to"
}

func standbysConfirming(r Replication) string {
	switch {
	case r.SyncStandbys < 0:
		return fmt.Sprintf("one of %d standbys", r.Standbys)
	case r.SyncStandbys == 1:
		return "1 standby"
	}
	return fmt.Sprintf("%d standbys", r.SyncStandbys)
}
