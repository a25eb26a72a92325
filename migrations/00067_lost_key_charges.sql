-- +goose Up

-- Succeeded charges the reconciler found with no order and no key row
-- claiming their provider key, and when it first did (the database's
-- clock). A key row is committed before its provider call, so such a
-- charge can only be a lost key's (a failover to a standby that had not
-- received it, a restore): once a later pass finds it still unclaimed a
-- lock length after the first, the reconciler refunds it. Rows stay as the
-- record of what was found; reconciled_refunds records the refund.
CREATE TABLE reconciler_unclaimed_charges (
    charge_id  text        PRIMARY KEY,
    first_seen timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE reconciler_unclaimed_charges;
