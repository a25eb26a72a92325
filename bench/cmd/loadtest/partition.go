package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/bench/loadtest"
)

// The alternative to deleting expired keys in batches: keys in a table
// partitioned by day (RANGE on created_at), and retention that detaches and
// drops a whole day. The load test builds the partitioned tables itself, in
// its throwaway database, as stand-ins for a partitioned idem_keys and
// order_keys: the same columns, checks and indexes, but the primary key
// (and order_keys' unique provider key) must include created_at, the
// partition key. The shop's schema is unchanged and its claims keep running
// against the real idem_keys: the leg measures what the retention operation
// costs them, beside what the sweeper's batched deletes cost them.

// dayPartition is one day's partition: rows with From <= created_at < To.
type dayPartition struct {
	Suffix   string // "p20261128", after the parent's name
	From, To time.Time
}

// dayPartitions returns the daily partitions (UTC days) from back days
// before now's day to ahead days after it, oldest first: back+1+ahead of
// them, today's among them.
func dayPartitions(now time.Time, back, ahead int) []dayPartition {
	now = now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var out []dayPartition
	for d := -back; d <= ahead; d++ {
		from := today.AddDate(0, 0, d)
		out = append(out, dayPartition{Suffix: from.Format("p20060102"), From: from, To: from.AddDate(0, 0, 1)})
	}
	return out
}

// expiredPartitions returns the partitions retention may drop at now: those
// whose every row was created more than keep ago (To <= now - keep). A
// partition holding one key young enough to be retried stays.
func expiredPartitions(parts []dayPartition, now time.Time, keep time.Duration) []dayPartition {
	var out []dayPartition
	for _, p := range parts {
		if !p.To.After(now.Add(-keep)) {
			out = append(out, p)
		}
	}
	return out
}

// partitionedDDL creates the stand-ins: idem_keys_part like the kit's
// idem_keys (columns, defaults, checks, the completer's and the sweeper's
// partial indexes) and order_keys_part like the shop's order_keys, with
// created_at to reference its key by, both PARTITION BY RANGE (created_at).
const partitionedDDL = `
CREATE TABLE idem_keys_part (
    LIKE idem_keys INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
    PRIMARY KEY (scope, key, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX idem_keys_part_stuck ON idem_keys_part (kind, locked_until) WHERE status = 'started' AND parked_at IS NULL;
CREATE INDEX idem_keys_part_finished_at ON idem_keys_part (kind, finished_at) WHERE status = 'finished';
CREATE TABLE order_keys_part (
    scope        text        NOT NULL,
    key          text        NOT NULL,
    created_at   timestamptz NOT NULL,
    provider_key text,
    cart_id      uuid,
    cart_version bigint,
    PRIMARY KEY (scope, key, created_at),
    UNIQUE (provider_key, created_at),
    FOREIGN KEY (scope, key, created_at) REFERENCES idem_keys_part (scope, key, created_at) ON DELETE CASCADE
) PARTITION BY RANGE (created_at);
-- The kit's idem_claim made exactly-once again on the stand-in: with
-- created_at in the primary key, ON CONFLICT cannot see a key claimed a
-- moment (or a day) earlier, so the claims of one key are serialized by a
-- transaction-scoped advisory lock on its hash, and the key is looked up in
-- every partition still there before it is inserted. Under READ COMMITTED
-- each statement of a volatile function takes a new snapshot, so the lookup
-- after the lock sees a claim that committed while this one waited for it.
CREATE FUNCTION idem_claim_part(p_scope text, p_key text, p_fingerprint bytea, p_lease interval,
                                p_request jsonb, p_operation_id uuid, p_lock_token uuid, p_kind text)
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_scope || '/' || p_key, 0));
    IF EXISTS (SELECT FROM idem_keys_part WHERE scope = p_scope AND key = p_key) THEN
        RETURN false;
    END IF;
    INSERT INTO idem_keys_part (kind, scope, key, fingerprint, operation_id, lock_token, locked_until, request)
    VALUES (p_kind, p_scope, p_key, p_fingerprint, p_operation_id, p_lock_token, now() + p_lease, p_request);
    RETURN true;
END
$$;
`

// createPartitioned creates the stand-in tables (anew, when an earlier leg
// left them) and one partition of each per day in parts.
func createPartitioned(ctx context.Context, conn *pgx.Conn, parts []dayPartition) error {
	if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS order_keys_part, idem_keys_part;
		DROP FUNCTION IF EXISTS idem_claim_part(text, text, bytea, interval, jsonb, uuid, uuid, text)`); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, partitionedDDL); err != nil {
		return fmt.Errorf("partitioned tables: %w", err)
	}
	for _, p := range parts {
		for _, parent := range []string{"idem_keys_part", "order_keys_part"} {
			q := fmt.Sprintf("CREATE TABLE %s_%s PARTITION OF %s FOR VALUES FROM ('%s') TO ('%s')",
				parent, p.Suffix, parent, p.From.Format(time.RFC3339), p.To.Format(time.RFC3339))
			if _, err := conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("partition %s_%s: %w", parent, p.Suffix, err)
			}
		}
	}
	return nil
}

// seedPartition bulk-inserts n finished order keys, prefix||1 to
// prefix||n, into day p of the
// stand-ins, as seedKeys does into the shop's tables: spread over the
// growthCustomers customers, and over the day's 24 hours, each finished
// when it was created.
func seedPartition(ctx context.Context, conn *pgx.Conn, prefix string, p dayPartition, n int) error {
	_, err := conn.Exec(ctx, `WITH k AS (
			INSERT INTO idem_keys_part (kind, scope, key, fingerprint, status, operation_id, lock_token, locked_until, request,
			                            response_status, response_body, created_at, finished_at)
			SELECT 'order', ('00000000-0000-4000-8000-' || lpad(to_hex(1 + g % $3::int), 12, '0')), $4::text || g, '\x01'::bytea,
			       'finished', gen_random_uuid(), gen_random_uuid(), t, '{}'::jsonb,
			       201, '{"bulk":true}'::bytea, t, t
			FROM generate_series(1, $2::bigint) g,
			     LATERAL (SELECT $1::timestamptz + (g - 1) * (interval '1 day' / $2::bigint) AS t) at
			RETURNING scope, key, created_at
		)
		INSERT INTO order_keys_part (scope, key, created_at, provider_key)
		SELECT scope, key, created_at, key FROM k`, p.From, n, growthCustomers, prefix)
	return err
}

// dropPartition is retention of day p: the referencing order_keys_part
// partition first (the referenced one cannot be detached while rows point
// into it), then idem_keys_part's, each detached and dropped. With
// concurrently, DETACH PARTITION … CONCURRENTLY (two transactions, the
// parent locked SHARE UPDATE EXCLUSIVE, never blocking the claims' inserts
// into the other partitions); without, a plain DETACH (ACCESS EXCLUSIVE on
// the parent for its moment).
func dropPartition(ctx context.Context, conn *pgx.Conn, p dayPartition, concurrently bool, step func(what string, took time.Duration)) error {
	how := ""
	if concurrently {
		how = " CONCURRENTLY"
	}
	for _, parent := range []string{"order_keys_part", "idem_keys_part"} {
		part := parent + "_" + p.Suffix
		began := time.Now()
		if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER TABLE %s DETACH PARTITION %s%s", parent, part, how)); err != nil {
			return fmt.Errorf("detach %s: %w", part, err)
		}
		step("detach "+part, time.Since(began))
		began = time.Now()
		if _, err := conn.Exec(ctx, "DROP TABLE "+part); err != nil {
			return fmt.Errorf("drop %s: %w", part, err)
		}
		step("drop "+part, time.Since(began))
	}
	return nil
}

// partitionLoad is sweepLoad's other leg: n expired keys in one day's
// partition of the stand-ins (with the days since, today's and tomorrow's
// partitions beside it), the claim (on the shop's idem_keys) alone, then
// again while retention detaches and drops that day, begun a second into
// the claim's leg. It returns the rows and a sentence saying how long the
// detach and drop took, in all and step by step.
func partitionLoad(ctx context.Context, direct string, pgb loadtest.Pgbench, opts loadtest.Options, cust string, n int, concurrently bool) ([]loadtest.Row, string, error) {
	conn, err := pgx.Connect(ctx, direct)
	if err != nil {
		return nil, "", err
	}
	defer conn.Close(ctx)
	if err := seedCustomers(ctx, conn); err != nil {
		return nil, "", err
	}
	now := time.Now()
	parts := dayPartitions(now, 2, 1)
	expired := expiredPartitions(parts, now, 24*time.Hour)
	if len(expired) != 1 {
		return nil, "", fmt.Errorf("partitions: %d expired of %d, want the oldest alone", len(expired), len(parts))
	}
	if err := createPartitioned(ctx, conn, parts); err != nil {
		return nil, "", err
	}
	began := time.Now()
	fmt.Fprintf(os.Stderr, "loadtest: partition: seeding %d expired keys into %s\n", n, expired[0].Suffix)
	if err := seedPartition(ctx, conn, "expired-", expired[0], n); err != nil {
		return nil, "", fmt.Errorf("partition seed: %w", err)
	}
	if err := afterSeed(ctx, conn, true, "idem_keys_part", "order_keys_part", "idem_keys", "order_keys"); err != nil {
		return nil, "", err
	}
	fmt.Fprintf(os.Stderr, "loadtest: partition: seeded in %s\n", time.Since(began).Round(time.Millisecond))
	how := "DETACH … CONCURRENTLY"
	if !concurrently {
		how = "DETACH"
	}
	quiet, err := pgb.Run(ctx, fmt.Sprintf("pgbench: claim alone, %s expired keys in a partition", human(n)), "claim.sql", opts, map[string]string{"cust": cust})
	if err != nil {
		return nil, "", err
	}
	type dropped struct {
		took time.Duration
		err  error
	}
	done := make(chan dropped, 1)
	var steps []string
	go func() {
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			done <- dropped{err: ctx.Err()}
			return
		}
		start := time.Now()
		err := dropPartition(ctx, conn, expired[0], concurrently, func(what string, took time.Duration) {
			steps = append(steps, fmt.Sprintf("%s %s", what, took.Round(time.Millisecond)))
		})
		done <- dropped{time.Since(start), err}
	}()
	busy, err := pgb.Run(ctx, fmt.Sprintf("pgbench: claim while retention drops the %s keys' partition (%s + DROP)", human(n), how), "claim.sql", opts, map[string]string{"cust": cust})
	d := <-done
	if err != nil {
		return nil, "", err
	}
	if d.err != nil {
		return nil, "", d.err
	}
	var left int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM idem_keys_part").Scan(&left); err != nil {
		return nil, "", err
	}
	if left != 0 {
		return nil, "", fmt.Errorf("partition: %d keys left after the drop", left)
	}
	rows := []loadtest.Row{{Result: quiet}, {Result: busy, Baseline: &quiet, Target: "p99 within 20 %"}}
	took := fmt.Sprintf("%s + DROP TABLE of the %s expired keys' partition (idem_keys_part and order_keys_part) took %s (%s)",
		how, human(n), d.took.Round(time.Millisecond), strings.Join(steps, ", "))
	if !concurrently {
		return rows, took, nil
	}
	// What a claim into the partitioned table itself would cost (the
	// advisory lock, the lookup in each partition, the routing): the
	// shop's claim, then claim_part.sql into the stand-ins, back to back,
	// with as many live keys in the stand-ins (in yesterday's partition)
	// as idem_keys holds.
	// The stand-ins are empty now (left is 0 above).
	var live int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM idem_keys").Scan(&live); err != nil {
		return nil, "", err
	}
	if live > 0 {
		fmt.Fprintf(os.Stderr, "loadtest: partition: seeding %d live keys into %s, as many as idem_keys holds\n", live, parts[1].Suffix)
		if err := seedPartition(ctx, conn, "live-", parts[1], live); err != nil {
			return nil, "", err
		}
	}
	if err := afterSeed(ctx, conn, true, "idem_keys_part", "order_keys_part", "idem_keys", "order_keys"); err != nil {
		return nil, "", err
	}
	plain, err := pgb.Run(ctx, fmt.Sprintf("pgbench: claim (idem_keys, %s keys), after the drop", human(live)), "claim.sql", opts, map[string]string{"cust": cust})
	if err != nil {
		return nil, "", err
	}
	parted, err := pgb.Run(ctx, fmt.Sprintf("pgbench: claim into the partitioned stand-in (%d partitions, %s keys), advisory lock + lookup", len(parts)-1, human(live)), "claim_part.sql", opts, map[string]string{"cust": cust})
	if err != nil {
		return nil, "", err
	}
	rows = append(rows, loadtest.Row{Result: plain}, loadtest.Row{Result: parted, Baseline: &plain, Target: "cost per claim"})
	return rows, took, nil
}

// parseSweepBy reads -sweep-by: a comma-separated list of delete,
// partition and partition-plain, each at most once, in the order given.
func parseSweepBy(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch f {
		case "delete", "partition", "partition-plain":
		default:
			return nil, fmt.Errorf("-sweep-by: want delete, partition or partition-plain, comma-separated, got %q", s)
		}
		if seen[f] {
			return nil, fmt.Errorf("-sweep-by: %s twice in %q", f, s)
		}
		seen[f] = true
		out = append(out, f)
	}
	return out, nil
}
