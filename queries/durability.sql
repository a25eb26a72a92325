-- name: RequireSyncReplica :exec
-- Turns the database's REQUIRE_SYNC_REPLICA policy on (migrations 00070 and
-- 00140): from then on, no connection commits a key while no
-- synchronous standby is named or its synchronous_commit is local or off.
UPDATE durability_policy SET require_sync = true WHERE NOT require_sync;
