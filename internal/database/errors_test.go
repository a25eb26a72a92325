package database

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestTranslate(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("exec: %w", &pgconn.PgError{Code: code}) }
	for _, tc := range []struct {
		name string
		err  error
		want error // nil: none of the package's errors
	}{
		{"no rows", pgx.ErrNoRows, ErrNotFound},
		{"unique violation", pg("23505"), ErrConflict},
		{"serialization failure", pg("40001"), ErrSerialization},
		{"deadlock detected", pg("40P01"), ErrSerialization},
		{"admin shutdown", pg("57P01"), ErrUnavailable},
		{"crash shutdown", pg("57P02"), ErrUnavailable},
		{"cannot connect now", pg("57P03"), ErrUnavailable},
		{"connection failure", pg("08006"), ErrUnavailable},
		{"too many connections", pg("53300"), ErrUnavailable},
		// Translated by class (idem's passingSQLState): codes no test
		// named before answered 500.
		{"statement completion unknown", pg("40003"), ErrUnavailable},
		{"disk full", pg("53100"), ErrUnavailable},
		{"out of memory", pg("53200"), ErrUnavailable},
		{"configuration limit exceeded", pg("53400"), ErrUnavailable},
		{"idle session timeout", pg("57P05"), ErrUnavailable},
		{"operator intervention", pg("57000"), ErrUnavailable},
		{"idle in transaction session timeout", pg("25P03"), ErrUnavailable},
		{"invalid transaction state", pg("25000"), nil},
		{"connect error", &pgconn.ConnectError{}, ErrUnavailable},
		{"connection refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, ErrUnavailable},
		{"connection closed", fmt.Errorf("acquire: %w", pgconn.ErrConnClosed), ErrUnavailable},
		{"server hung up", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), ErrUnavailable},
		{"syntax error", pg("42601"), nil},
		{"check violation", pg("23514"), nil},
		{"sold out", fmt.Errorf("exec: %w", &pgconn.PgError{Code: "23514", ConstraintName: "stock_sold_out"}), ErrSoldOut},
		{"client went away", fmt.Errorf("receive: %w", errors.Join(context.Canceled, io.ErrUnexpectedEOF)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := translate(tc.err)
			// ErrNotFound replaces pgx.ErrNoRows, which says nothing more.
			if !errors.Is(tc.want, ErrNotFound) && !errors.Is(got, tc.err) {
				t.Errorf("translate(%v) dropped the original error from the chain", tc.err)
			}
			for _, e := range []error{ErrNotFound, ErrConflict, ErrSoldOut, ErrSerialization, ErrUnavailable} {
				if is, want := errors.Is(got, e), errors.Is(tc.want, e); is != want {
					t.Errorf("errors.Is(translate(%T), %v): got %v, want %v", tc.err, e, is, want)
				}
			}
		})
	}
}
