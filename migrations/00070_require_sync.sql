-- +goose Up

-- REQUIRE_SYNC_REPLICA, enforced where the writes happen. While the
-- database's policy asks for it (durability_policy.require_sync, which a
-- shop started with REQUIRE_SYNC_REPLICA=1 turns on), a key may be written
-- (idem_keys: its claim, its finish, its lease; order_keys: the stored
-- PaymentIntent) only while a synchronous standby is named
-- (synchronous_standby_names). A primary that commits alone, as
-- pg_auto_failover's does in wait_primary while its standby is away or
-- rejoining, refuses the write with SQLSTATE 25006
-- (read_only_sql_transaction), which the shop answers as an outage (503
-- with Retry-After): a key acknowledged then could be lost to the next
-- failover, and its retry charged again. The chaos harness's failover runs
-- found such a window inside pg_auto_failover 2.0's own switchover
-- (docs/ha.md).
--
-- The policy is a row, not a setting each connection sends: PgBouncer
-- refuses unknown startup parameters and a transaction pooler cannot keep
-- a session's SET, while a row reaches every connection at once, through
-- any pooler, and outlives the shop that turned it on (a shop started
-- without the flag does not drop it; UPDATE durability_policy SET
-- require_sync = false does). AFTER ROW triggers fire only for rows
-- written, so a replay (a claim that finds its key) still reads; the WHEN
-- clause calls the function only while no synchronous standby is named.
CREATE TABLE durability_policy (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    require_sync boolean NOT NULL DEFAULT false
);
INSERT INTO durability_policy DEFAULT VALUES;

-- +goose StatementBegin
CREATE FUNCTION exactlyonce_require_sync() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- +goose Down
DROP TRIGGER order_keys_require_sync ON order_keys;
DROP TRIGGER idem_keys_require_sync ON idem_keys;
DROP FUNCTION exactlyonce_require_sync();
DROP TABLE durability_policy;
