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
		return passingSQLState(pgErr.Code)
	}
	var connectErr *pgconn.ConnectError
	var netErr *net.OpError
	return errors.As(err, &connectErr) || // no connection could be made (refused, no socket, …)
		errors.Is(err, pgconn.ErrConnClosed) || // the pool handed out a connection that then died
		errors.As(err, &netErr) || // the socket failed mid-statement
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) // the server hung up
}

// passingSQLState reports whether a statement refused with SQLSTATE code
// failed for a reason that passes by itself, so that running it again, as a
// client's retry with the same key does, may succeed. It goes by
// PostgreSQL's classes where a whole class is such a reason, so that a
// code of the class not named here (a new one, or one never seen in a
// test) is a 503 with Retry-After and not a 500:
//
//   - 08 connection exception: the connection failed or was refused;
//   - 40 transaction rollback: a serialization failure, a deadlock
//     (40P01), a statement whose completion is unknown; the database
//     rolled the transaction back, and the same transaction may pass;
//   - 53 insufficient resources: disk full (53100), out of memory (53200),
//     too many connections (53300), a configuration limit (53400);
//   - 57 operator intervention: a statement cancelled or timed out
//     (57014), the server shutting down or crashed (57P01, 57P02), not yet
//     accepting connections (57P03), an idle session ended (57P05).
//
// And three codes of classes that hold mistakes too: 25P03, a session
// ended for idling in its transaction (a stalled process, whose retry
// starts afresh); 55P03, a lock not available within lock_timeout; 25006,
// a write sent to a primary that has just become a standby.
func passingSQLState(code string) bool {
	switch code {
	case "25P03", // idle_in_transaction_session_timeout
		"55P03", // lock_not_available: lock_timeout
		"25006": // read_only_sql_transaction: a primary that has just become a standby
		return true
	}
	if len(code) != 5 {
		return false
	}
	switch code[:2] {
	case "08", "40", "53", "57":
		return true
	}
	return false
}
