package fakestripe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
)

// A memory transaction that fails leaves nothing behind, as a rolled-back
// database transaction does: not its intent, not its key's answer.
func TestMemoryTransactionRollsBack(t *testing.T) {
	s := newMemoryStore()
	ctx := context.Background()
	failed := errors.New("the work failed")
	err := s.inTx(ctx, func(tx storeTx) error {
		in := Intent{ID: "pi_gone", Amount: 100, Currency: "eur", Status: StatusRequiresPaymentMethod}
		if err := tx.insertIntent(ctx, &in); err != nil {
			return err
		}
		if err := tx.storeAnswer(ctx, "k", []byte("hash"), answer{status: 200, body: []byte("{}")}); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("got %v, want the work's error", err)
	}
	if _, err := s.intent(ctx, "pi_gone"); !errors.Is(err, errNotFound) {
		t.Errorf("intent: got %v, want errNotFound", err)
	}
	if all, _ := s.list(ctx, listQuery{}); len(all) != 0 {
		t.Errorf("list: got %d intents, want none", len(all))
	}
	_ = s.inTx(ctx, func(tx storeTx) error {
		if _, _, ok, _ := tx.storedAnswer(ctx, "k"); ok {
			t.Error("got the failed transaction's answer stored, want none")
		}
		return nil
	})
}

// A key held is in use until released, and released once even if release
// is called twice.
func TestMemoryHoldKey(t *testing.T) {
	s := newMemoryStore()
	ctx := context.Background()
	claim := func() error { return s.inTx(ctx, func(tx storeTx) error { return tx.claimKey(ctx, "k") }) }
	release, _ := s.holdKey(ctx, "k")
	again, _ := s.holdKey(ctx, "k")
	release()
	release()
	if err := claim(); !errors.Is(err, errKeyInUse) {
		t.Errorf("held once more: got %v, want errKeyInUse", err)
	}
	again()
	if err := claim(); err != nil {
		t.Errorf("released: got %v, want the key free", err)
	}
}

// A refund by charge finds the intent only by its latest charge: one a
// later confirm replaced is not found, as the database's query does not.
func TestMemoryIntentOfCharge(t *testing.T) {
	s := newMemoryStore()
	ctx := context.Background()
	first, second := "ch_1", "ch_2"
	in := Intent{ID: "pi_1", Amount: 100, Currency: "eur", Status: StatusRequiresPaymentMethod}
	for _, charge := range []*string{&first, &second} {
		err := s.inTx(ctx, func(tx storeTx) error {
			if charge == &first {
				if err := tx.insertIntent(ctx, &in); err != nil {
					return err
				}
			}
			in.LatestCharge = charge
			return tx.saveIntent(ctx, in)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	_ = s.inTx(ctx, func(tx storeTx) error {
		if id, err := tx.intentOfCharge(ctx, second); err != nil || id != "pi_1" {
			t.Errorf("latest charge: got %q, %v, want pi_1", id, err)
		}
		if _, err := tx.intentOfCharge(ctx, first); !errors.Is(err, errNotFound) {
			t.Errorf("replaced charge: got %v, want errNotFound", err)
		}
		return nil
	})
}

// Concurrent create+confirm calls with one key each, and reads meanwhile,
// through the handlers: each key charges once (run with -race).
func TestMemoryConcurrentCalls(t *testing.T) {
	p := NewInMemory("sk")
	defer p.Close()
	e := echo.New()
	p.Mount(e)
	srv := httptest.NewServer(e)
	defer srv.Close()
	call := func(key string) (int, error) {
		form := url.Values{"amount": {"100"}, "currency": {"eur"}, "payment_method": {"pm_card_visa"}, "confirm": {"true"}}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/payment_intents", strings.NewReader(form.Encode()))
		req.Header.Set("Authorization", "Bearer sk")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if status, err := call(fmt.Sprintf("k%d", i%4)); err != nil || status != http.StatusOK {
				t.Errorf("call %d: got %d, %v, want 200", i, status, err)
			}
			if _, err := p.Ledger(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n, err := p.Succeeded(context.Background()); err != nil || n != 4 {
		t.Errorf("got %d succeeded, %v, want 4: one per key", n, err)
	}
}

// The memory store refuses a refund past the intent's amount, as the
// database's CHECK does, and a refused one leaves nothing behind.
func TestMemoryRefundPastTheAmount(t *testing.T) {
	s := newMemoryStore()
	ctx := context.Background()
	charge := "ch_1"
	in := Intent{ID: "pi_1", Amount: 100, Currency: "eur", Status: StatusSucceeded, LatestCharge: &charge}
	refund := func(id string, amount int64) error {
		return s.inTx(ctx, func(tx storeTx) error {
			return tx.insertRefund(ctx, &Refund{ID: id, PaymentIntentID: in.ID, Charge: charge, Amount: amount, Currency: "eur"})
		})
	}
	if err := s.inTx(ctx, func(tx storeTx) error { return tx.insertIntent(ctx, &in) }); err != nil {
		t.Fatal(err)
	}
	if err := refund("re_1", 60); err != nil {
		t.Fatal(err)
	}
	if err := refund("re_2", 41); err == nil {
		t.Error("a refund past the amount: got no error")
	}
	if err := refund("re_3", 40); err != nil {
		t.Fatal(err)
	}
	got, err := s.intent(ctx, in.ID)
	if err != nil || got.AmountRefunded != 100 || !got.Refunded {
		t.Errorf("got %d refunded (in full: %v), %v, want 100 in full", got.AmountRefunded, got.Refunded, err)
	}
	if rs, _ := s.refunds(ctx, refundQuery{intentID: in.ID}); len(rs) != 2 || rs[0].ID != "re_1" || rs[1].ID != "re_3" {
		t.Errorf("refunds: got %+v, want re_1 and re_3", rs)
	}
}
