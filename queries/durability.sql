-- name: RequireSyncReplica :exec
-- Turns the database's REQUIRE_SYNC_REPLICA policy on (migration 00070):
-- from the next statement, no connection writes a key while no
-- synchronous standby is named.
UPDATE durability_policy SET require_sync = true WHERE NOT require_sync;
