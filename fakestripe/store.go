package fakestripe

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// querier is what a request's work runs its statements on: the pool, or the
// transaction inTx opened. Both pgx types have these methods.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// errNotFound is what the fake's reads return for a row that is not there
// (pgx.ErrNoRows, named for what the handlers act on).
var errNotFound = pgx.ErrNoRows

// txAttempts bounds the reruns of a transaction PostgreSQL aborted with a
// serialization failure. READ COMMITTED, stated below, does not raise it for
// these statements: a guard for a server whose default was changed, or a
// hot-standby conflict, which Stripe would answer 500 for as well.
const txAttempts = 3

// inTx runs fn in a READ COMMITTED transaction on pool and commits when fn
// returns nil. The fake owns its pool and its schema: it shares nothing with
// the shop it serves but HTTP.
func inTx(ctx context.Context, pool *pgxpool.Pool, fn func(c querier) error) error {
	var err error
	for range txAttempts {
		err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error { return fn(tx) })
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "40001" {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("fakestripe transaction: %w", err)
	}
	return nil
}
