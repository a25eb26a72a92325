package database

import (
	"context"
	"strings"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5/pgxpool"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// traceQueries makes every statement on the pool a span (otelpgx) of the
// span its context carries, if that one records: a query outside any trace
// (River polling for jobs, the completer looking for stuck keys) makes none.
// The span keeps the statement's text, never its arguments, which hold
// tokens, keys and request bodies; it is named after what pgx did and
// sqlc's name of the query, "query FinishOrder" (or "prepare FinishOrder",
// the statement's first use on a connection, a round trip of its own), or,
// for SQL that sqlc did not write, its first word ("query SELECT").
// Connection details are left out: they are the same for every span, and
// reading them copies the pool's configuration on every acquire.
func traceQueries(cfg *pgxpool.Config, tp trace.TracerProvider) {
	cfg.ConnConfig.Tracer = otelpgx.NewTracer(
		otelpgx.WithTracerProvider(tp),
		otelpgx.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelpgx.WithSpanNameCtxFunc(queryName), otelpgx.WithQuerySpanNamePrefix(),
		otelpgx.WithDisableConnectionDetailsInAttributes(),
	)
}

// queryName is sqlc's name of a query ("-- name: FinishOrder :one"), or
// the statement's first word.
func queryName(ctx context.Context, sql string) string {
	if rest, ok := strings.CutPrefix(sql, "-- name: "); ok {
		if name, _, ok := strings.Cut(rest, " "); ok {
			return name
		}
	}
	return otelpgx.SQLOperationName(ctx, sql)
}
