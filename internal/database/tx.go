package database

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"exactlyonce/internal/db"
)

// txAttempts bounds how often InTx runs a transaction that PostgreSQL keeps
// aborting with a serialization failure; after that the error goes to the
// caller, which answers 503 and lets the client retry.
const txAttempts = 3

// txOptions states the isolation level instead of taking the server's
// default, which a DBA can change (default_transaction_isolation): every
// transaction here is written for READ COMMITTED, with row locks (FOR
// UPDATE, SKIP LOCKED) and single-statement guards doing the rest.
var txOptions = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

// InTx runs fn in a READ COMMITTED transaction and commits if fn returns nil.
// Any error, or a panic, rolls the transaction back. It is the one place in
// the code base that begins a transaction.
//
// A transaction rolled back in a conflict with another (ErrSerialization: a
// serialization failure, 40001, or a deadlock, 40P01) runs fn again, up to
// txAttempts times in all. READ COMMITTED does not raise 40001 for the
// statements this code runs, so for it this is a guard (a later change to
// the isolation level, or a hot-standby conflict, must meet a retry and
// then a 503, never a 500); a deadlock is the other side's lock order
// meeting ours, which the retry usually no longer meets. fn must therefore
// touch nothing but the database through q, and reset whatever it assigns
// outside itself.
func (d *DB) InTx(ctx context.Context, fn func(q *db.Queries) error) error {
	return d.InTxConn(ctx, func(conn db.DBTX) error { return fn(db.New(conn)) })
}

// InTxConn is InTx for the demo rooms whose queries sqlc generates into
// packages of their own (the fake provider's providerdb): fn gets the
// transaction as the connection those packages' New takes.
func (d *DB) InTxConn(ctx context.Context, fn func(conn db.DBTX) error) error {
	var err error
	for attempt := 1; attempt <= txAttempts; attempt++ {
		err = d.inTx(ctx, fn)
		if !errors.Is(err, ErrSerialization) {
			return err
		}
		// A short pause, longer each time, lets the transaction that won
		// finish before this one runs again.
		if serr := sleep(ctx, time.Duration(attempt)*10*time.Millisecond); serr != nil {
			return err
		}
	}
	return err
}

// InJobTx is InTx for River's workers, whose effect and completion
// (river.JobCompleteTx) must commit together: fn gets the transaction as
// River takes it, besides the queries. The pgx type goes no further than
// the workers, which are River's and so pgx's anyway.
func (d *DB) InJobTx(ctx context.Context, fn func(tx pgx.Tx, q *db.Queries) error) error {
	var err error
	for attempt := 1; attempt <= txAttempts; attempt++ {
		err = d.inPgxTx(ctx, func(tx pgx.Tx) error { return fn(tx, db.New(translating{tx})) })
		if !errors.Is(err, ErrSerialization) {
			return err
		}
		if serr := sleep(ctx, time.Duration(attempt)*10*time.Millisecond); serr != nil {
			return err
		}
	}
	return err
}

func (d *DB) inTx(ctx context.Context, fn func(conn db.DBTX) error) error {
	return d.inPgxTx(ctx, func(tx pgx.Tx) error { return fn(translating{tx}) })
}

func (d *DB) inPgxTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := d.Pool.BeginTx(ctx, txOptions)
	if err != nil {
		return fmt.Errorf("begin: %w", translate(err))
	}
	// Rollback after Commit is a no-op, so this covers every early return.
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // the error that ended fn is the one returned

	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", translate(err))
	}
	return nil
}

// TxQueries returns queries that run in tx, a transaction someone else began
// (the idem kit's Do, which finishes its key in the same transaction), with
// their errors translated like every other query's.
func TxQueries(tx pgx.Tx) *db.Queries { return db.New(translating{tx}) }

// sleep waits d, or returns ctx's error if ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
