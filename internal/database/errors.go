package database

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"exactlyonce/internal/db"
)

// Errors the rest of the application can test for with errors.Is.
var (
	// ErrNotFound means a query that returns one row found none.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a unique or primary key constraint refused a row.
	ErrConflict = errors.New("already exists")
	// ErrSoldOut means a claim asked for more of a product than is left on
	// hand (the stock table's stock_sold_out check, migration 00180): the
	// statement failed as a whole, so nothing was claimed.
	ErrSoldOut = errors.New("sold out")
)

// Translate maps the driver's errors onto the package's errors (ErrNotFound,
// ErrConflict, ErrSoldOut, ErrSerialization, ErrUnavailable) while keeping the original
// in the chain for logs. Every query of internal/db is translated already;
// callers use it for errors of code that talks to the pool itself, such as
// the idem kit's key store, so that an outage still answers 503.
func Translate(err error) error { return translate(err) }

func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, ErrSerialization) {
		return err // translated already
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
		return errors.Join(ErrConflict, err)
	}
	if errors.As(err, &pgErr) && pgErr.Code == "23514" && pgErr.ConstraintName == "stock_sold_out" { // check_violation
		return errors.Join(ErrSoldOut, err)
	}
	if errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01") { // serialization_failure, deadlock_detected
		return errors.Join(ErrSerialization, err)
	}
	if unavailable(err) {
		return errors.Join(ErrUnavailable, err)
	}
	return err
}

// translating wraps the connection sqlc's generated code talks to, so that
// every generated query returns translated errors without hand-written
// wrappers around each one.
type translating struct{ db.DBTX }

func (t translating) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.DBTX.Exec(ctx, sql, args...)
	return tag, translate(err)
}

func (t translating) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := t.DBTX.Query(ctx, sql, args...) //nolint:rowserrcheck // handed on: the caller reads them and their Err, translated
	if err != nil {
		return nil, translate(err)
	}
	return translatingRows{rows}, nil
}

func (t translating) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return translatingRow{t.DBTX.QueryRow(ctx, sql, args...)}
}

type translatingRow struct{ pgx.Row }

func (r translatingRow) Scan(dest ...any) error { return translate(r.Row.Scan(dest...)) }

type translatingRows struct{ pgx.Rows }

func (r translatingRows) Err() error { return translate(r.Rows.Err()) }
