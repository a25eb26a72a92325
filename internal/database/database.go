// Package database is the boundary between the application and PostgreSQL.
// It opens the pool, applies the embedded migrations, runs transactions, and
// translates driver errors into the few errors the rest of the code acts on,
// so that no pgx type or SQLSTATE string travels further up.
package database

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/internal/db"
)

// DB is the application's handle on the database: the pool plus queries that
// run outside any explicit transaction (each statement commits on its own).
type DB struct {
	Pool *pgxpool.Pool
	*db.Queries
}

// New wraps a pool. Every query issued through the result, or through the
// *db.Queries handed to an InTx function, has its errors translated.
func New(pool *pgxpool.Pool) *DB {
	return &DB{Pool: pool, Queries: db.New(translating{pool})}
}

// Open connects to url and checks the server answers before returning, so a
// wrong DATABASE_URL fails at start-up rather than on the first request.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	return OpenWith(ctx, url, PoolOptions{})
}

// Conn is the pool as sqlc's generated code talks to it, with errors
// translated: for the demo rooms whose queries sqlc generates into packages
// of their own (demo/lab/labdb, bench/chaos/chaosdb), whose DBTX is
// the same interface.
func (d *DB) Conn() db.DBTX { return translating{d.Pool} }
