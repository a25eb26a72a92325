package fakeprovider_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"exactlyonce/internal/database"
	"exactlyonce/internal/fakeprovider"
	"exactlyonce/internal/pgtest"
)

func TestFaultRates(t *testing.T) {
	t.Parallel()
	// The draws are fixed, so which call meets which fault is known: the
	// rates are laid end to end over [0, 1) in the order before_charge,
	// after_charge, decline, timeout.
	var mu sync.Mutex
	draws := []float64{0.1, 0.3, 0.55, 0.9, 0.3}
	draw := func() float64 {
		mu.Lock()
		defer mu.Unlock()
		d := draws[0]
		draws = draws[1:]
		return d
	}
	pool := pgtest.NewPool(t)
	p := fakeprovider.New(database.New(pool), secret,
		fakeprovider.WithLogger(slog.New(slog.DiscardHandler)), fakeprovider.WithDraw(draw))
	e := echo.New()
	p.Register(e.Group("/provider"))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	s := &server{pool: pool, url: srv.URL + "/provider"}

	if err := p.SetBehaviour(fakeprovider.Behaviour{Rates: fakeprovider.Rates{
		BeforeCharge: 0.2, AfterCharge: 0.2, Decline: 0.2,
	}}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		status  int
		charged bool
	}{
		{http.StatusInternalServerError, false}, // 0.1: before_charge
		{http.StatusInternalServerError, true},  // 0.3: after_charge
		{http.StatusPaymentRequired, true},      // 0.55: decline (recorded, declined)
		{http.StatusCreated, true},              // 0.9: past every rate
	} {
		key := "k" + string(rune('0'+i))
		a := s.call(t, http.MethodPost, "/v1/charges", chargeBody, map[string]string{"Idempotency-Key": key})
		if a.status != want.status {
			t.Errorf("call %d: got %d %s, want %d", i, a.status, a.body, want.status)
		}
		var n int
		if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM provider.charges WHERE idempotency_key = $1", key).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if got := n == 1; got != want.charged {
			t.Errorf("call %d: got charged=%v, want %v", i, got, want.charged)
		}
	}

	// A fault set for every call wins over the rates.
	if err := p.SetBehaviour(fakeprovider.Behaviour{Fail: fakeprovider.FaultBeforeCharge, Rates: fakeprovider.Rates{AfterCharge: 1}}); err != nil {
		t.Fatal(err)
	}
	a := s.call(t, http.MethodPost, "/v1/charges", chargeBody, map[string]string{"Idempotency-Key": "fixed"})
	if a.status != http.StatusInternalServerError || !strings.Contains(a.body, "before_charge") {
		t.Errorf("got %d %s, want the before_charge fault", a.status, a.body)
	}
}
