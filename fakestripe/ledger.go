package fakestripe

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Ledger is every PaymentIntent the fake holds in the database of pool,
// oldest first, each with how much of it was refunded (AmountRefunded) and
// whether all of it was (Refunded): the provider's side of
// the books that the chaos harness holds against the shop's orders, read
// from the provider's own database after the fake's process is gone.
func Ledger(ctx context.Context, pool *pgxpool.Pool) ([]Intent, error) {
	return ledger(ctx, postgresStore{pool})
}

// Ledger is every PaymentIntent p holds, oldest first, in either store.
func (p *Provider) Ledger(ctx context.Context) ([]Intent, error) {
	return ledger(ctx, p.store)
}

func ledger(ctx context.Context, s store) ([]Intent, error) {
	out, err := s.list(ctx, listQuery{})
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return out, nil
}

// RefundLedger is every refund the fake holds in the database of pool,
// oldest first: each refund the shop recorded is one of these, with its
// amount, which the chaos harness can hold against the shop's records.
func RefundLedger(ctx context.Context, pool *pgxpool.Pool) ([]Refund, error) {
	return refundLedger(ctx, postgresStore{pool})
}

// RefundLedger is every refund p holds, oldest first, in either store.
func (p *Provider) RefundLedger(ctx context.Context) ([]Refund, error) {
	return refundLedger(ctx, p.store)
}

func refundLedger(ctx context.Context, s store) ([]Refund, error) {
	out, err := s.refunds(ctx, refundQuery{})
	if err != nil {
		return nil, fmt.Errorf("refund ledger: %w", err)
	}
	return out, nil
}

// IntentsByMetadata returns the intents whose metadata holds every pair of
// match, oldest first: the lab asks what a customer's keys charged.
func (p *Provider) IntentsByMetadata(ctx context.Context, match map[string]string) ([]Intent, error) {
	out, err := p.store.list(ctx, listQuery{metadata: match})
	if err != nil {
		return nil, fmt.Errorf("intents by metadata: %w", err)
	}
	return out, nil
}

// Succeeded counts the succeeded PaymentIntents: the charges, for the demo
// totals.
func (p *Provider) Succeeded(ctx context.Context) (int64, error) {
	return p.store.succeeded(ctx)
}
