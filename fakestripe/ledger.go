package fakestripe

import (
	"context"
	"fmt"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Ledger is every PaymentIntent the fake holds, oldest first, each with
// whether it was refunded: the provider's side of the books that the chaos
// harness holds against the shop's orders, read from the provider's own
// database.
func Ledger(ctx context.Context, pool *pgxpool.Pool) ([]Intent, error) {
	rows, err := pool.Query(ctx, `SELECT `+intentColumns+` FROM fakestripe.payment_intents i ORDER BY i.seq`)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		in, err := scanIntent(rows)
		if err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// IntentsByMetadata returns the intents whose metadata holds every pair of
// match, oldest first: the lab asks what a customer's keys charged.
func (p *Provider) IntentsByMetadata(ctx context.Context, match map[string]string) ([]Intent, error) {
	rows, err := p.pool.Query(ctx, `SELECT `+intentColumns+` FROM fakestripe.payment_intents i
		WHERE i.metadata @> $1 ORDER BY i.seq`, mustJSON(match))
	if err != nil {
		return nil, fmt.Errorf("intents by metadata: %w", err)
	}
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		in, err := scanIntent(rows)
		if err != nil {
			return nil, fmt.Errorf("intents by metadata: %w", err)
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// Succeeded counts the succeeded PaymentIntents: the charges, for the demo
// totals.
func (p *Provider) Succeeded(ctx context.Context) (int64, error) {
	var n int64
	err := p.pool.QueryRow(ctx, `SELECT count(*) FROM fakestripe.payment_intents WHERE status = 'succeeded'`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count succeeded intents: %w", err)
	}
	return n, nil
}
