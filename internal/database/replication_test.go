package database_test

import (
	"strings"
	"testing"

	"exactlyonce/internal/database"
)

// What a failover or a crash could cost, for each way a server can stand.
func TestReplicationDurability(t *testing.T) {
	const quorum = "ANY 1 (pgautofailover_standby_2)"
	for _, tc := range []struct {
		name        string
		r           database.Replication
		synchronous bool
		risk        string // a part of Risk, or "" for none
		describe    string // a part of Describe
	}{
		{"single server", database.Replication{SynchronousCommit: "on"}, false, "", "single server"},
		{"single server, commit off", database.Replication{SynchronousCommit: "off"}, false, "synchronous_commit is off", "synchronous_commit is off"},
		{"asynchronous standby", database.Replication{SynchronousCommit: "on", Standbys: 1}, false, "1 standby streams asynchronously", "asynchronously"},
		{"synchronous standby", database.Replication{SynchronousCommit: "on", SyncStandbyNames: quorum, Standbys: 1, SyncStandbys: 1}, true, "", "synchronous: 1 standby confirms every commit"},
		{"synchronous, sync_state hidden", database.Replication{SynchronousCommit: "on", SyncStandbyNames: quorum, Standbys: 1, SyncStandbys: -1}, true, "", "one of 1 standbys"},
		{"standby named, commit local", database.Replication{SynchronousCommit: "local", SyncStandbyNames: quorum, Standbys: 1, SyncStandbys: 1}, false, "asynchronously", "asynchronously"},
		{"standby named, none connected", database.Replication{SynchronousCommit: "on", SyncStandbyNames: quorum}, false, "", "commits wait for one"},
		{"remote_apply", database.Replication{SynchronousCommit: "remote_apply", SyncStandbyNames: quorum, Standbys: 1, SyncStandbys: 1}, true, "", "synchronous"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Synchronous(); got != tc.synchronous {
				t.Errorf("Synchronous: got %v, want %v", got, tc.synchronous)
			}
			if got := tc.r.Risk(); (tc.risk == "") != (got == "") || !strings.Contains(got, tc.risk) {
				t.Errorf("Risk: got %q, want %q", got, tc.risk)
			}
			if got := tc.r.Describe(); !strings.Contains(got, tc.describe) {
				t.Errorf("Describe: got %q, want it to say %q", got, tc.describe)
			}
		})
	}
}
