package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/bench/loadtest"
)

// growthCustomers spread the bulk-seeded keys, as many customers would.
const growthCustomers = 1000

// seedCustomers makes the growthCustomers the bulk-seeded keys belong to,
// with ids made from their numbers, as seedKeys makes its scopes; those
// made already stay.
func seedCustomers(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `INSERT INTO customers (id, name)
		SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, 'growth'
		FROM generate_series(1, $1::int) g ON CONFLICT DO NOTHING`, growthCustomers)
	return err
}

// growth measures the claim (pgbench, claim.sql) at each table size in
// sizes, bulk-seeding finished keys with generate_series (on the direct
// connection) up to each size first. The rows it returns carry the size in
// their names; the first is the baseline of the others.
func growth(ctx context.Context, direct string, pgb loadtest.Pgbench, opts loadtest.Options, cust string, sizes []int) ([]loadtest.Row, error) {
	conn, err := pgx.Connect(ctx, direct)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	if err := seedCustomers(ctx, conn); err != nil {
		return nil, fmt.Errorf("growth customers: %w", err)
	}
	var rows []loadtest.Row
	var first *loadtest.Result
	seeded := 0
	for _, size := range sizes {
		var have int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM idem_keys").Scan(&have); err != nil {
			return nil, err
		}
		if size > have {
			began := time.Now()
			fmt.Fprintf(os.Stderr, "loadtest: growth: seeding %d keys (%d there)\n", size-have, have)
			if err := seedKeys(ctx, conn, "bulk-", seeded+1, seeded+size-have, time.Hour); err != nil {
				return nil, fmt.Errorf("growth seed: %w", err)
			}
			seeded += size - have
			if err := afterSeed(ctx, conn, false, "idem_keys", "order_keys"); err != nil {
				return nil, err
			}
			fmt.Fprintf(os.Stderr, "loadtest: growth: seeded in %s\n", time.Since(began).Round(time.Millisecond))
		}
		r, err := pgb.Run(ctx, fmt.Sprintf("pgbench: claim alone at %s keys", human(size)), "claim.sql", opts, map[string]string{"cust": cust})
		if err != nil {
			return nil, err
		}
		row := loadtest.Row{Result: r}
		if first == nil {
			first = &r
		} else {
			row.Baseline, row.Target = first, "p99 within 20 %"
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// seedKeys bulk-inserts the finished order keys prefix||from to prefix||to,
// spread over the growthCustomers customers, as the shop stores them: a row
// of the kit's idem_keys (scope = the customer's id as text), finished age
// ago, and the shop's order_keys row beside it, in one statement.
func seedKeys(ctx context.Context, conn *pgx.Conn, prefix string, from, to int, age time.Duration) error {
	_, err := conn.Exec(ctx, `WITH k AS (
			INSERT INTO idem_keys (kind, scope, key, fingerprint, status, operation_id, lock_token, locked_until, request,
			                       response_status, response_body, created_at, finished_at)
			SELECT 'order', ('00000000-0000-4000-8000-' || lpad(to_hex(1 + g % $4::int), 12, '0')), $1::text || g, '\x01'::bytea,
			       'finished', gen_random_uuid(), gen_random_uuid(), now() - $5::interval, '{}'::jsonb,
			       201, '{"bulk":true}'::bytea, now() - $5::interval, now() - $5::interval
			FROM generate_series($2::bigint, $3::bigint) g
			RETURNING scope, key
		)
		INSERT INTO order_keys (scope, key, provider_key)
		SELECT scope, key, key FROM k`, prefix, from, to, growthCustomers, age)
	return err
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.ToLower(f))
		mult := 1
		switch {
		case strings.HasSuffix(f, "k"):
			mult, f = 1000, strings.TrimSuffix(f, "k")
		case strings.HasSuffix(f, "m"):
			mult, f = 1000000, strings.TrimSuffix(f, "m")
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 || n*mult > 20000000 {
			return nil, fmt.Errorf("-growth: want sizes such as 10k,1m (up to 20m), got %q", s)
		}
		out = append(out, n*mult)
	}
	return out, nil
}

func human(n int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0:
		return strconv.Itoa(n/1000000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// afterSeed runs VACUUM ANALYZE on tables a bulk seed wrote, so that the
// planner and the visibility map know the new rows before a leg measures
// them, and with checkpoint a CHECKPOINT, so that the leg does not pay for
// writing the seed's pages out.
func afterSeed(ctx context.Context, conn *pgx.Conn, checkpoint bool, tables ...string) error {
	for _, t := range tables {
		if _, err := conn.Exec(ctx, "VACUUM ANALYZE "+t); err != nil {
			return fmt.Errorf("vacuum %s: %w", t, err)
		}
	}
	if checkpoint {
		if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	return nil
}

// sweepLoad measures the claim while the sweeper deletes n expired keys:
// it bulk-seeds n finished keys created 25 hours ago (past the default
// KEY_RETENTION), measures the claim alone, then again while `web sweep`
// deletes them in its batches. It returns the two rows (the first the
// baseline of the second) and how long the sweep took.
func sweepLoad(ctx context.Context, web, direct string, pgb loadtest.Pgbench, opts loadtest.Options, cust string, n int) ([]loadtest.Row, time.Duration, error) {
	conn, err := pgx.Connect(ctx, direct)
	if err != nil {
		return nil, 0, err
	}
	defer conn.Close(ctx)
	if err := seedCustomers(ctx, conn); err != nil {
		return nil, 0, err
	}
	began := time.Now()
	fmt.Fprintf(os.Stderr, "loadtest: sweep: seeding %d expired keys\n", n)
	if err := seedKeys(ctx, conn, "expired-", 1, n, 25*time.Hour); err != nil {
		return nil, 0, fmt.Errorf("sweep seed: %w", err)
	}
	// The seed's writes checkpointed before the baseline, as in the
	// partition leg, so that neither leg's baseline pays for them.
	if err := afterSeed(ctx, conn, true, "idem_keys", "order_keys"); err != nil {
		return nil, 0, err
	}
	fmt.Fprintf(os.Stderr, "loadtest: sweep: seeded in %s\n", time.Since(began).Round(time.Millisecond))
	quiet, err := pgb.Run(ctx, fmt.Sprintf("pgbench: claim alone, %s expired keys waiting", human(n)), "claim.sql", opts, map[string]string{"cust": cust})
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.CommandContext(ctx, web, "sweep")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+direct, "LOG_LEVEL=warn")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	sweepBegan := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	swept := make(chan error, 1)
	go func() { swept <- cmd.Wait() }()
	busy, err := pgb.Run(ctx, fmt.Sprintf("pgbench: claim while the sweeper deletes %s keys", human(n)), "claim.sql", opts, map[string]string{"cust": cust})
	if err != nil {
		return nil, 0, err
	}
	if err := <-swept; err != nil {
		return nil, 0, fmt.Errorf("web sweep: %w\n%s", err, out.String())
	}
	// `web sweep` stops when it finds another instance sweeping (the
	// shop's own sweeper, every SWEEP_INTERVAL): run it again until the
	// expired keys are gone, whoever deletes them.
	for deadline := time.Now().Add(10 * time.Minute); ; {
		var left int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM idem_keys WHERE key LIKE 'expired-%'").Scan(&left); err != nil {
			return nil, 0, err
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, 0, fmt.Errorf("%d of the %d expired keys still there after 10 minutes", left, n)
		}
		time.Sleep(time.Second)
		again := exec.CommandContext(ctx, web, "sweep")
		again.Env = cmd.Env
		if b, err := again.CombinedOutput(); err != nil {
			return nil, 0, fmt.Errorf("web sweep: %w\n%s", err, b)
		}
	}
	took := time.Since(sweepBegan)
	return []loadtest.Row{{Result: quiet}, {Result: busy, Baseline: &quiet, Target: "p99 within 20 %"}}, took, nil
}

// waitJobs waits until no River job of the shop's queue is waiting or
// running (pgbench's jobs go to a queue of their own that no worker
// takes), for at most limit, and says how long it took and how many were
// left.
func waitJobs(ctx context.Context, dsn string, limit time.Duration) (time.Duration, int64, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close(context.Background())
	start := time.Now()
	for {
		var left int64
		err := conn.QueryRow(ctx, loadtest.Own+`SELECT count(*) FROM river_job
			WHERE queue = 'default' AND state IN ('available', 'running', 'retryable', 'scheduled')`).Scan(&left)
		if err != nil {
			return 0, 0, fmt.Errorf("count jobs: %w", err)
		}
		if left == 0 || time.Since(start) > limit {
			return time.Since(start), left, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}
