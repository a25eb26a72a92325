package database

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"exactlyonce/internal/db"
)

// InTx runs fn in a READ COMMITTED transaction and commits if fn returns nil.
// Any error, or a panic, rolls the transaction back. It is the one place in
// the code base that begins a transaction.
func (d *DB) InTx(ctx context.Context, fn func(q *db.Queries) error) error {
	tx, err := d.Pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", translate(err))
	}
	// Rollback after Commit is a no-op, so this covers every early return.
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck

	if err := fn(db.New(translating{tx})); err != nil {
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
