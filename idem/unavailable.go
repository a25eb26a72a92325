package idem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable means the key store's database did not answer: it is out
// of reach, restarting, refusing connections, read-only after a failover, or
// slower than the caller's deadline. What the operation came to is whatever
// the key says the next time it is asked, so the client retries with the
// same key after a short wait (an HTTP API answers 503 with Retry-After,
// never 500). Every error the kit returns from a database call that failed
// this way wraps it, and the driver's error too, for the logs.
var ErrUnavailable = errors.New("idempotency key store unavailable")

// storeError wraps the error of a database call with what the kit was doing,
// and with ErrUnavailable when the database did not answer.
func storeError(what string, err error) error {
	if IsUnavailable(err) {
		return fmt.Errorf("%s: %w: %w", what, ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// inTx runs fn in a transaction on the store's pool. A failure to begin or
// commit it, and any error of fn's that is an outage, wraps ErrUnavailable.
func (s *Store) inTx(ctx context.Context, what string, fn func(tx pgx.Tx) error) error {
	err := pgx.BeginFunc(ctx, s.pool, fn)
	if IsUnavailable(err) && !errors.Is(err, ErrUnavailable) {
		return storeError(what, err)
	}
	return err
}

// IsUnavailable reports whether err from pgx means that PostgreSQL did not
// answer, rather than that the statement was wrong: every such failure
// passes by itself, and the request may be sent again. The kit uses it for
// its own calls; an application can use it for its queries, so that one
// rule says what an outage is. It looks at types and SQLSTATEs through
// errors.As, never at the text of a message.
//
// A cancelled context is not an outage but the caller going away, and a
// deadline is: a statement that waited past it on a stalled server, a row
// lock held by a stalled session or an exhausted pool has an outcome nobody
// knows yet, which is what a retry with the same key is for.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", // admin_shutdown: pg_ctl stop -m fast
			"57P02", // crash_shutdown: another backend crashed, or -m immediate
			"57P03", // cannot_connect_now: starting up, shutting down, recovering
			"53300", // too_many_connections
			"57014", // query_canceled: statement_timeout
			"55P03", // lock_not_available: lock_timeout
			"25006": // read_only_sql_transaction: a primary that has just become a standby
			return true
		}
		return len(pgErr.Code) == 5 && pgErr.Code[:2] == "08" // connection_exception class
	}
	var connectErr *pgconn.ConnectError
	var netErr *net.OpError
	return errors.As(err, &connectErr) || // no connection could be made (refused, no socket, …)
		errors.Is(err, pgconn.ErrConnClosed) || // the pool handed out a connection that then died
		errors.As(err, &netErr) || // the socket failed mid-statement
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) // the server hung up
}
