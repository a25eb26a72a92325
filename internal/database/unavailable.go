package database

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable means PostgreSQL could not be reached, or dropped the
// connection, or refused it while starting or stopping: the request failed
// for a reason that passes by itself. Callers answer 503 with Retry-After;
// the pool opens new connections once the server is back.
var ErrUnavailable = errors.New("database unavailable")

// ErrSerialization means PostgreSQL aborted a transaction to keep it
// serializable (SQLSTATE 40001). InTx retries it; it only escapes InTx
// when every attempt failed, and running the request again may succeed.
var ErrSerialization = errors.New("serialization failure")

// unavailable reports whether err means the server is out of reach rather
// than that the statement is wrong. All of these are found by type or by
// SQLSTATE through errors.As, never by the text of the message.
func unavailable(err error) bool {
	// A cancelled request is the client going away, not the database.
	if errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "57P01", // admin_shutdown: pg_ctl stop -m fast
			pgErr.Code == "57P02",                          // crash_shutdown: another backend crashed, or -m immediate
			pgErr.Code == "57P03",                          // cannot_connect_now: starting up, shutting down, recovering
			pgErr.Code == "53300",                          // too_many_connections
			len(pgErr.Code) == 5 && pgErr.Code[:2] == "08": // connection_exception class
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr *net.OpError
	switch {
	case errors.As(err, &connectErr), // no connection could be made (refused, no socket, …)
		errors.Is(err, pgconn.ErrConnClosed),                        // the pool handed out a connection that then died
		errors.As(err, &netErr),                                     // the socket failed mid-statement
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF): // the server hung up
		return true
	}
	return false
}
