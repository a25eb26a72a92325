-- +goose Up

-- REQUIRE_SYNC_REPLICA, enforced where the writes happen: a connection
-- that sets exactlyonce.require_sync to on (the shop's, with
-- REQUIRE_SYNC_REPLICA=1) may write a key (idem_keys: its claim, its
-- finish, its lease; order_keys: the stored PaymentIntent) only while a
-- synchronous standby is named (synchronous_standby_names). A primary that
-- commits alone, as pg_auto_failover's does in wait_primary while its
-- standby is away or rejoining, refuses the write with SQLSTATE 25006
-- (read_only_sql_transaction), which the shop answers as an outage (503
-- with Retry-After): a key acknowledged then could be lost to the next
-- failover, and its retry charged again. The chaos harness's failover runs
-- found such a window inside pg_auto_failover 2.0's own switchover
-- (docs/ha.md). AFTER ROW triggers fire only for rows written, so a replay
-- (a claim that finds its key) still reads, and with the setting off
-- (the default) the WHEN clause keeps them from being called at all.
-- +goose StatementBegin
CREATE FUNCTION exactlyonce_require_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('synchronous_standby_names') = '' THEN
        RAISE EXCEPTION 'no synchronous standby confirms commits: a key written now could be lost to a failover (REQUIRE_SYNC_REPLICA)'
            USING ERRCODE = 'read_only_sql_transaction';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER idem_keys_require_sync AFTER INSERT OR UPDATE ON idem_keys
    FOR EACH ROW WHEN (current_setting('exactlyonce.require_sync', true) = 'on')
    EXECUTE FUNCTION exactlyonce_require_sync();
CREATE TRIGGER order_keys_require_sync AFTER INSERT OR UPDATE ON order_keys
    FOR EACH ROW WHEN (current_setting('exactlyonce.require_sync', true) = 'on')
    EXECUTE FUNCTION exactlyonce_require_sync();

-- +goose Down
DROP TRIGGER order_keys_require_sync ON order_keys;
DROP TRIGGER idem_keys_require_sync ON idem_keys;
DROP FUNCTION exactlyonce_require_sync();
