package database

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"
)

// PoolOptions are the settings of the application's pool that are chosen on
// purpose rather than left to pgx's defaults (see docs/performance.md).
type PoolOptions struct {
	// MaxConns caps the pool (DB_MAX_CONNS). Zero keeps pgx's default, the
	// greater of 4 and the number of CPUs. Every instance opens up to this
	// many connections, so instances × MaxConns (plus the migrations' one
	// and psql sessions) must stay below the server's max_connections minus
	// superuser_reserved_connections, or below PgBouncer's pool size.
	MaxConns int32
	// QueryMode is pgx's query exec mode (DB_QUERY_MODE); "" keeps pgx's
	// default, cache_statement. See ParseQueryMode.
	QueryMode string
	// Tracing, when set, makes each statement a span of the trace it runs
	// in (traceQueries).
	Tracing trace.TracerProvider
}

// QueryModes are the values DB_QUERY_MODE accepts, pgx's names for its
// query exec modes.
var QueryModes = map[string]pgx.QueryExecMode{
	// Named prepared statements, cached per connection: one round trip per
	// query once prepared. Needs a direct connection (or PgBouncer ≥ 1.21
	// with max_prepared_statements); PgBouncer 1.18 cannot run it.
	"cache_statement": pgx.QueryExecModeCacheStatement,
	// Unnamed statements with the parameter and result types cached per
	// connection: one round trip per query, binary parameters, safe behind
	// PgBouncer in transaction pooling. The mode to use with PgBouncer 1.18.
	"cache_describe": pgx.QueryExecModeCacheDescribe,
	// Describes every query first: two round trips, and unsafe behind a
	// transaction pooler (the two may reach different server connections).
	"describe_exec": pgx.QueryExecModeDescribeExec,
	// Text parameters typed from the Go values, one round trip. Works with
	// PgBouncer. A []byte travels as bytea text here, so JSON goes as a
	// string cast to jsonb. make test/querymodes runs the API suite in it.
	"exec": pgx.QueryExecModeExec,
	// The simple protocol with client-side interpolation; as exec.
	"simple_protocol": pgx.QueryExecModeSimpleProtocol,
}

// ParseQueryMode maps a DB_QUERY_MODE value onto pgx's mode.
func ParseQueryMode(s string) (pgx.QueryExecMode, error) {
	if m, ok := QueryModes[s]; ok {
		return m, nil
	}
	return 0, fmt.Errorf("want one of cache_statement, cache_describe, describe_exec, exec, simple_protocol; got %q", s)
}

// OpenWith is Open with the pool's size and query mode set by opts.
func OpenWith(ctx context.Context, url string, opts PoolOptions) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parse error can quote the URL, password included: say less.
		return nil, errors.New("open database: DATABASE_URL is not a valid PostgreSQL connection string")
	}
	if err := opts.apply(cfg); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return pool, nil
}

func (o PoolOptions) apply(cfg *pgxpool.Config) error {
	if o.MaxConns < 0 {
		return fmt.Errorf("DB_MAX_CONNS must not be negative, got %d", o.MaxConns)
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
		if cfg.MinConns > cfg.MaxConns {
			cfg.MinConns = cfg.MaxConns
		}
	}
	if o.QueryMode != "" {
		mode, err := ParseQueryMode(strings.TrimSpace(o.QueryMode))
		if err != nil {
			return fmt.Errorf("DB_QUERY_MODE: %w", err)
		}
		cfg.ConnConfig.DefaultQueryExecMode = mode
	}
	if o.Tracing != nil {
		traceQueries(cfg, o.Tracing)
	}
	return nil
}

// OpenBeside opens a second pool to pool's server, with pool's settings (its
// tracing too) but at most maxConns connections: the outbox's jobs get one
// of their own, so that however they wait (a slow mail server, a backlog)
// they cannot take the connections the orders need.
func OpenBeside(ctx context.Context, pool *pgxpool.Pool, maxConns int32) (*pgxpool.Pool, error) {
	if maxConns < 1 {
		return nil, fmt.Errorf("open database: a pool needs at least 1 connection, got %d", maxConns)
	}
	cfg := pool.Config()
	cfg.MaxConns, cfg.MinConns = maxConns, min(cfg.MinConns, maxConns)
	beside, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return beside, nil
}
