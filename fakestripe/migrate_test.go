package fakestripe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A database refunded in full by the fake before partial refunds keeps
// its books through migration 00300: the refunded intent has all of its
// amount refunded, the other none, and the intent takes no second refund
// past its amount (the CHECK).
func TestMigrationKeepsFullRefunds(t *testing.T) {
	admin := os.Getenv("TEST_DATABASE_URL")
	if admin == "" {
		t.Skip("TEST_DATABASE_URL is not set: run under bin/testpg")
	}
	ctx := context.Background()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "fakestripe_migrate_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)") //nolint:errcheck // a leftover database of a test server
	cfg, err := pgxpool.ParseConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Database = name
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	p, err := migrations(pool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 200); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO fakestripe.payment_intents (id, amount, currency, status, latest_charge)
		VALUES ('pi_refunded', 1000, 'eur', 'succeeded', 'ch_1'), ('pi_kept', 500, 'eur', 'succeeded', 'ch_2');
		INSERT INTO fakestripe.refunds (id, payment_intent_id, charge, amount, currency)
		VALUES ('re_1', 'pi_refunded', 'ch_1', 1000, 'eur')`); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	s := postgresStore{pool}
	for id, want := range map[string]int64{"pi_refunded": 1000, "pi_kept": 0} {
		in, err := s.intent(ctx, id)
		if err != nil || in.AmountRefunded != want || in.Refunded != (want > 0) {
			t.Errorf("%s: got %d refunded (in full: %v), %v, want %d", id, in.AmountRefunded, in.Refunded, err, want)
		}
	}
	err = s.inTx(ctx, func(tx storeTx) error {
		return tx.insertRefund(ctx, &Refund{ID: "re_2", PaymentIntentID: "pi_refunded", Charge: "ch_1", Amount: 1, Currency: "eur"})
	})
	if err == nil {
		t.Error("a refund past the amount was stored")
	}
	if rs, err := s.refunds(ctx, refundQuery{intentID: "pi_refunded"}); err != nil || len(rs) != 1 || rs[0].Seq == 0 {
		t.Errorf("refunds: got %+v, %v, want re_1 with its seq", rs, err)
	}
}
