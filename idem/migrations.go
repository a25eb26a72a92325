package idem

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations holds the kit's schema as goose SQL migrations, the files at
// its root (00001_idem_keys.sql, …). An application that runs goose applies
// them with a provider of their own, in a version table of their own
// (MigrationsTable), so that they number apart from its own:
//
//	store, _ := goosedb.NewStore(goosedb.DialectPostgres, idem.MigrationsTable)
//	p, err := goose.NewProvider("", db, idem.Migrations, goose.WithStore(store))
//
// An application without goose calls Migrate instead. Use one or the
// other on a database, never both.
var Migrations fs.FS = mustSub(migrationFiles, "migrations")

// MigrationsTable is the version table to give goose for Migrations.
const MigrationsTable = "idem_db_version"

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

// Migrate applies the kit's migrations that the database has not seen, for
// an application that does not run goose: each migration's Up part in a
// transaction of its own, recorded in idem_schema_versions, so that several
// instances starting at once apply each once.
//
// Every step is a transaction that first takes a transaction-level advisory
// lock, so concurrent Migrates take their turns and the lock never outlives
// its transaction. A session-level lock would, through a transaction pooler
// such as PgBouncer: the lock and its unlock may reach different server
// connections, which leaves the lock held by an idle connection of the
// pooler's, and the next Migrate waiting for it for ever.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	files, err := fs.Glob(Migrations, "*.sql")
	if err != nil || len(files) == 0 {
		return fmt.Errorf("idem: no migrations embedded (%v)", err)
	}
	step := func(fn func(tx pgx.Tx) error) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockID); err != nil {
				return err
			}
			return fn(tx)
		})
	}
	err = step(func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS idem_schema_versions (
			version bigint PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
		return err
	})
	if err != nil {
		return storeError("idem: migrate: version table", err)
	}
	for _, f := range files { // fs.Glob sorts them, and the names are zero-padded
		version, err := strconv.ParseInt(strings.SplitN(path.Base(f), "_", 2)[0], 10, 64)
		if err != nil {
			return fmt.Errorf("idem: migration %s: no version number", f)
		}
		b, err := fs.ReadFile(Migrations, f)
		if err != nil {
			return err
		}
		up, err := upPart(string(b))
		if err != nil {
			return fmt.Errorf("idem: migration %s: %w", f, err)
		}
		err = step(func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `INSERT INTO idem_schema_versions (version) VALUES ($1) ON CONFLICT DO NOTHING`, version)
			if err != nil || tag.RowsAffected() == 0 {
				return err // applied already
			}
			// The simple protocol takes the file's several statements in
			// one query; no arguments makes pgx use it.
			_, err = tx.Exec(ctx, up, pgx.QueryExecModeSimpleProtocol)
			return err
		})
		if err != nil {
			return storeError("idem: migrate "+f, err)
		}
	}
	return nil
}

// migrateLockID is the advisory lock each of Migrate's transactions holds.
const migrateLockID int64 = 7305812216405213250

// upPart is the "-- +goose Up" part of one of the kit's migrations, to apply
// as one query (goose's StatementBegin and StatementEnd annotations are
// comments to PostgreSQL). A migration marked NO TRANSACTION is refused.
func upPart(sql string) (string, error) {
	if strings.Contains(sql, "-- +goose NO TRANSACTION") {
		return "", fmt.Errorf("NO TRANSACTION migrations cannot be applied in one query")
	}
	_, up, ok := strings.Cut(sql, "-- +goose Up")
	if !ok {
		return "", fmt.Errorf("no -- +goose Up annotation")
	}
	up, _, _ = strings.Cut(up, "-- +goose Down")
	return up, nil
}
