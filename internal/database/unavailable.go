package database

import (
	"errors"

	"exactlyonce/idem"
)

// ErrUnavailable means PostgreSQL could not be reached, or dropped the
// connection, or refused it while starting, stopping or after a failover,
// or did not answer before the request's deadline: the request failed for a
// reason that passes by itself, and its outcome is whatever a retry finds.
// Callers answer 503 with Retry-After; the pool opens new connections once
// the server is back.
var ErrUnavailable = errors.New("database unavailable")

// ErrSerialization means PostgreSQL rolled a transaction back in a conflict
// with a concurrent one: a serialization failure (SQLSTATE 40001) or a
// deadlock it broke by failing this side (40P01). InTx retries it; it only
// escapes InTx when every attempt failed, or from a statement run on its
// own, and running the request again may succeed.
var ErrSerialization = errors.New("serialization failure")

// unavailable reports whether err means the server did not answer rather
// than that the statement is wrong. The rule is the idempotency kit's
// (idem.IsUnavailable), so that the kit's own calls and the shop's queries
// call the same failures an outage.
func unavailable(err error) bool { return idem.IsUnavailable(err) }
