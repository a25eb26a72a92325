package fakestripe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// postgresStore keeps the fake's state in its schema (Migrate) on the
// database of pool: the default store, which outlives a restart of the
// fake. The fake owns its pool and its schema: it shares nothing with the
// shop it serves but HTTP.
type postgresStore struct{ pool *pgxpool.Pool }

// querier is what a transaction's statements run on: the pool, or the
// transaction. Both pgx types have these methods.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// txAttempts bounds the reruns of a transaction PostgreSQL aborted with a
// serialization failure. READ COMMITTED, stated below, does not raise it for
// these statements: a guard for a server whose default was changed, or a
// hot-standby conflict, which Stripe would answer 500 for as well.
const txAttempts = 3

// inTx runs fn in a READ COMMITTED transaction and commits when fn returns
// nil.
func (s postgresStore) inTx(ctx context.Context, fn func(tx storeTx) error) error {
	var err error
	for range txAttempts {
		err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error { return fn(postgresTx{tx}) })
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "40001" {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("fakestripe transaction: %w", err)
	}
	return nil
}

// postgresTx is a transaction of postgresStore.
type postgresTx struct{ c querier }

// keyLockClass is the class of the advisory lock a request holds on its
// idempotency key while it runs.
const keyLockClass = 1717660011

func (t postgresTx) claimKey(ctx context.Context, key string) error {
	var got bool
	if err := t.c.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, hashtext($2))`, keyLockClass, key).Scan(&got); err != nil {
		return fmt.Errorf("lock key: %w", err)
	}
	if !got {
		return errKeyInUse
	}
	return nil
}

func (t postgresTx) storedAnswer(ctx context.Context, key string) ([]byte, answer, bool, error) {
	var (
		hash []byte
		a    answer
	)
	err := t.c.QueryRow(ctx, `SELECT request_hash, status, body FROM fakestripe.idempotency_keys WHERE key = $1`, key).
		Scan(&hash, &a.status, &a.body)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, answer{}, false, nil
	case err != nil:
		return nil, answer{}, false, fmt.Errorf("read key: %w", err)
	}
	return hash, a, true, nil
}

func (t postgresTx) storeAnswer(ctx context.Context, key string, hash []byte, a answer) error {
	_, err := t.c.Exec(ctx, `INSERT INTO fakestripe.idempotency_keys (key, request_hash, status, body) VALUES ($1, $2, $3, $4)`,
		key, hash, a.status, a.body)
	if err != nil {
		return fmt.Errorf("store answer: %w", err)
	}
	return nil
}

func (t postgresTx) insertIntent(ctx context.Context, in *Intent) error {
	row := t.c.QueryRow(ctx, `INSERT INTO fakestripe.payment_intents (id, amount, currency, description, metadata, status, payment_method)
		VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7) RETURNING seq, created`,
		// The metadata as text, cast: in the exec and simple_protocol
		// query modes a []byte travels as bytea text (\x7b…), which
		// jsonb refuses (22P02).
		in.ID, in.Amount, in.Currency, in.Description, string(mustJSON(in.Metadata)), in.Status, in.PaymentMethod)
	if err := row.Scan(&in.Seq, &in.Created); err != nil {
		return fmt.Errorf("insert intent: %w", err)
	}
	return nil
}

func (t postgresTx) lockIntent(ctx context.Context, id string) (Intent, error) {
	return scanIntent(t.c.QueryRow(ctx, `SELECT `+intentColumns+` FROM fakestripe.payment_intents i WHERE i.id = $1 FOR UPDATE`, id))
}

func (t postgresTx) saveIntent(ctx context.Context, in Intent) error {
	_, err := t.c.Exec(ctx, `UPDATE fakestripe.payment_intents
		SET status = $2, payment_method = $3, latest_charge = $4, last_payment_error = $5, canceled_at = $6, cancellation_reason = $7,
		    processing_until = $8, return_url = $9, authenticate_url = $10
		WHERE id = $1`,
		in.ID, in.Status, in.PaymentMethod, in.LatestCharge, in.LastPaymentError, in.CanceledAt, in.CancellationReason,
		in.ProcessingUntil, in.ReturnURL, in.AuthenticateURL)
	if err != nil {
		return fmt.Errorf("save intent: %w", err)
	}
	return nil
}

func (t postgresTx) intentOfCharge(ctx context.Context, charge string) (string, error) {
	var id string
	err := t.c.QueryRow(ctx, `SELECT id FROM fakestripe.payment_intents WHERE latest_charge = $1`, charge).Scan(&id)
	if err != nil && !errors.Is(err, errNotFound) {
		return "", fmt.Errorf("charge: %w", err)
	}
	return id, err
}

// insertRefund adds r and adds its amount to the intent's amount_refunded,
// whose CHECK refuses a refund past the charge should the caller have
// decided on a stale amount.
func (t postgresTx) insertRefund(ctx context.Context, r *Refund) error {
	err := t.c.QueryRow(ctx, `INSERT INTO fakestripe.refunds (id, payment_intent_id, charge, amount, currency, reason, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING seq, created`,
		r.ID, r.PaymentIntentID, r.Charge, r.Amount, r.Currency, r.Reason, string(mustJSON(r.metadata()))).Scan(&r.Seq, &r.Created)
	if err != nil {
		return fmt.Errorf("insert refund: %w", err)
	}
	if _, err := t.c.Exec(ctx, `UPDATE fakestripe.payment_intents SET amount_refunded = amount_refunded + $2 WHERE id = $1`,
		r.PaymentIntentID, r.Amount); err != nil {
		return fmt.Errorf("insert refund: %w", err)
	}
	return nil
}

func (s postgresStore) refund(ctx context.Context, id string) (Refund, error) {
	return scanRefund(s.pool.QueryRow(ctx, `SELECT `+refundColumns+` FROM fakestripe.refunds r WHERE r.id = $1`, id))
}

func (s postgresStore) refunds(ctx context.Context, q refundQuery) ([]Refund, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if q.intentID != "" {
		where = append(where, "r.payment_intent_id = "+arg(q.intentID))
	}
	where, tail := q.window.sql("r", where, arg)
	sql := `SELECT ` + refundColumns + ` FROM fakestripe.refunds r`
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += tail
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("list refunds: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Refund, error) { return scanRefund(row) })
	if err != nil {
		return nil, fmt.Errorf("list refunds: %w", err)
	}
	return out, nil
}

const refundColumns = `r.id, r.seq, r.payment_intent_id, r.charge, r.amount, r.currency, r.reason, r.metadata, r.created`

func scanRefund(row scanner) (Refund, error) {
	var r Refund
	var metadata []byte
	if err := row.Scan(&r.ID, &r.Seq, &r.PaymentIntentID, &r.Charge, &r.Amount, &r.Currency, &r.Reason, &metadata, &r.Created); err != nil {
		return Refund{}, err
	}
	if err := json.Unmarshal(metadata, &r.Metadata); err != nil {
		return Refund{}, fmt.Errorf("refund metadata: %w", err)
	}
	return r, nil
}

func (s postgresStore) intent(ctx context.Context, id string) (Intent, error) {
	return scanIntent(s.pool.QueryRow(ctx, `SELECT `+intentColumns+` FROM fakestripe.payment_intents i WHERE i.id = $1`, id))
}

func (s postgresStore) list(ctx context.Context, q listQuery) ([]Intent, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if len(q.metadata) > 0 {
		where = append(where, "i.metadata @> "+arg(string(mustJSON(q.metadata)))+"::jsonb")
	}
	for _, b := range q.created {
		where = append(where, "i.created "+b.op+" "+arg(b.t)) // op is one of createdBound's, never the caller's text
	}
	where, tail := q.window.sql("i", where, arg)
	sql := `SELECT ` + intentColumns + ` FROM fakestripe.payment_intents i`
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += tail
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("list intents: %w", err)
	}
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		in, err := scanIntent(rows)
		if err != nil {
			return nil, fmt.Errorf("list intents: %w", err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list intents: %w", err)
	}
	return out, nil
}

func (s postgresStore) succeeded(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM fakestripe.payment_intents WHERE status = 'succeeded'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count succeeded intents: %w", err)
	}
	return n, nil
}

// holdKey takes the advisory lock claimKey tries, inside a transaction
// left open until release: a pooler in transaction mode (PgBouncer) keeps
// a transaction on its server connection, but not a session's lock.
func (s postgresStore) holdKey(ctx context.Context, key string) (func(), error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("hold key: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, keyLockClass, key); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("hold key: %w", err)
	}
	return func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }, nil
}

const intentColumns = `i.id, i.seq, i.amount, i.currency, i.description, i.metadata, i.status, i.payment_method,
	i.latest_charge, i.last_payment_error, i.canceled_at, i.cancellation_reason, i.created, i.processing_until,
	i.return_url, i.authenticate_url, i.amount_refunded`

type scanner interface{ Scan(dest ...any) error }

func scanIntent(row scanner) (Intent, error) {
	var in Intent
	var metadata []byte
	err := row.Scan(&in.ID, &in.Seq, &in.Amount, &in.Currency, &in.Description, &metadata, &in.Status, &in.PaymentMethod,
		&in.LatestCharge, &in.LastPaymentError, &in.CanceledAt, &in.CancellationReason, &in.Created, &in.ProcessingUntil,
		&in.ReturnURL, &in.AuthenticateURL, &in.AmountRefunded)
	if err != nil {
		return Intent{}, err
	}
	in.refundedInFull()
	if err := json.Unmarshal(metadata, &in.Metadata); err != nil {
		return Intent{}, fmt.Errorf("metadata: %w", err)
	}
	return in, nil
}
