-- +goose Up

-- REQUIRE_SYNC_REPLICA judged when a key commits, not when its row is
-- written (issue 33, item 5). Migration 00070's triggers checked
-- synchronous_standby_names as each row was written, and nothing else:
-- a session whose synchronous_commit is local or off passed them (a
-- standby was named) and committed without waiting for it, and so did one
-- that turned synchronous_commit down after its write, before its COMMIT.
--
-- The triggers are now constraint triggers, DEFERRABLE INITIALLY
-- DEFERRED: they run at COMMIT (for a single statement, at its end), after
-- every statement of the transaction and its last SET LOCAL, and read the
-- settings the commit itself will obey. They have no WHEN clause, because
-- a constraint trigger's WHEN is judged when the row is written, which is
-- the mistake being undone; the function returns at once when a standby is
-- named and the commit waits for it, so the policy row is read only when
-- the write is about to be refused or the policy is off.
--
-- The commit waits for the synchronous standby for synchronous_commit on,
-- remote_apply and remote_write: each makes the standby have the commit's
-- WAL before the client is told (remote_write: written to the standby's
-- files but not yet flushed, which only a crash of the standby's machine
-- together with the primary's could lose; a failover promotes a standby
-- whose PostgreSQL has it). local and off do not wait, and are refused
-- with the same SQLSTATE as "no standby named", which the shop answers 503
-- with Retry-After.
--
-- What this cannot close: the check runs just before the commit record is
-- written, and a commit that then waits for the standby is released with
-- success if the standby's name is removed while it waits
-- (pg_auto_failover's keeper does so when it takes the primary to
-- wait_primary). docs/ha.md says what that can lose and how a formation of
-- two standbys keeps the names from being emptied. A session that runs SET
-- CONSTRAINTS ALL IMMEDIATE before lowering synchronous_commit also gets
-- past it; that is not a mistake but a choice to bypass the policy, as
-- UPDATE durability_policy would be.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION exactlyonce_require_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('synchronous_standby_names') <> ''
       AND current_setting('synchronous_commit') IN ('on', 'remote_apply', 'remote_write') THEN
        RETURN NULL;
    END IF;
    IF NOT coalesce((SELECT require_sync FROM durability_policy), false) THEN
        RETURN NULL;
    END IF;
    IF current_setting('synchronous_standby_names') = '' THEN
        RAISE EXCEPTION 'no synchronous standby confirms commits: a key written now could be lost to a failover (REQUIRE_SYNC_REPLICA)'
            USING ERRCODE = 'read_only_sql_transaction';
    END IF;
    RAISE EXCEPTION 'synchronous_commit is %: this commit would not wait for the synchronous standby, and a key written now could be lost to a failover (REQUIRE_SYNC_REPLICA)',
        current_setting('synchronous_commit')
        USING ERRCODE = 'read_only_sql_transaction';
END
$$;
-- +goose StatementEnd

DROP TRIGGER idem_keys_require_sync ON idem_keys;
DROP TRIGGER order_keys_require_sync ON order_keys;
CREATE CONSTRAINT TRIGGER idem_keys_require_sync AFTER INSERT OR UPDATE ON idem_keys
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION exactlyonce_require_sync();
CREATE CONSTRAINT TRIGGER order_keys_require_sync AFTER INSERT OR UPDATE ON order_keys
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION exactlyonce_require_sync();

-- +goose Down
DROP TRIGGER order_keys_require_sync ON order_keys;
DROP TRIGGER idem_keys_require_sync ON idem_keys;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION exactlyonce_require_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT require_sync FROM durability_policy) THEN
        RAISE EXCEPTION 'no synchronous standby confirms commits: a key written now could be lost to a failover (REQUIRE_SYNC_REPLICA)'
            USING ERRCODE = 'read_only_sql_transaction';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER idem_keys_require_sync AFTER INSERT OR UPDATE ON idem_keys
    FOR EACH ROW WHEN (current_setting('synchronous_standby_names') = '')
    EXECUTE FUNCTION exactlyonce_require_sync();
CREATE TRIGGER order_keys_require_sync AFTER INSERT OR UPDATE ON order_keys
    FOR EACH ROW WHEN (current_setting('synchronous_standby_names') = '')
    EXECUTE FUNCTION exactlyonce_require_sync();
