package payment_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/database"
	"exactlyonce/internal/fakeprovider"
	"exactlyonce/internal/payment"
	"exactlyonce/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	secret       = "sk_test_0123456789"
	goodCard     = "4242 4242 4242 4242"
	goodCardBare = "4242424242424242"
)

// provider is a fake provider served over real HTTP, with its own database.
type provider struct {
	*fakeprovider.Provider
	pool *pgxpool.Pool
	url  string
}

func newProvider(tb testing.TB) *provider {
	tb.Helper()
	pool := pgtest.NewPool(tb)
	p := fakeprovider.New(database.New(pool), secret, fakeprovider.WithLogger(slog.New(slog.DiscardHandler)))
	e := echo.New()
	p.Register(e.Group("/provider"))
	srv := httptest.NewServer(e)
	tb.Cleanup(srv.Close)
	return &provider{Provider: p, pool: pool, url: srv.URL + "/provider"}
}

func (p *provider) client(timeout time.Duration) *payment.Client {
	return payment.NewClient(p.url, secret, timeout)
}

func (p *provider) setBehaviour(tb testing.TB, b fakeprovider.Behaviour) {
	tb.Helper()
	if err := p.SetBehaviour(b); err != nil {
		tb.Fatalf("SetBehaviour(%+v): %v", b, err)
	}
}

// rows counts the charges recorded for key.
func (p *provider) rows(tb testing.TB, key string) int {
	tb.Helper()
	var n int
	err := p.pool.QueryRow(context.Background(),
		"SELECT count(*) FROM provider.charges WHERE idempotency_key = $1", key).Scan(&n)
	if err != nil {
		tb.Fatalf("count charges: %v", err)
	}
	return n
}

func request(key string) payment.ChargeRequest {
	return payment.ChargeRequest{
		IdempotencyKey: key,
		Amount:         4900,
		Currency:       "eur",
		Card:           goodCard,
		Description:    "order 1",
	}
}

// checkNoSecrets fails if err's text gives away the card or the secret.
func checkNoSecrets(tb testing.TB, err error) {
	tb.Helper()
	for _, s := range []string{goodCard, goodCardBare, fakeprovider.DeclinedCard, secret} {
		if strings.Contains(err.Error(), s) {
			tb.Errorf("error %q contains a secret or card number", err)
		}
	}
}

func unavailable(tb testing.TB, err error) *payment.UnavailableError {
	tb.Helper()
	var ue *payment.UnavailableError
	if !errors.As(err, &ue) {
		tb.Fatalf("got error %v (%T), want *payment.UnavailableError", err, err)
	}
	checkNoSecrets(tb, err)
	return ue
}

func TestChargeSucceeds(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	ch, err := p.client(5*time.Second).Charge(t.Context(), request("k1"))
	if err != nil {
		t.Fatalf("Charge: %v", err)
	}
	if !strings.HasPrefix(ch.ID, "ch_") {
		t.Errorf("got id %q, want prefix ch_", ch.ID)
	}
	want := payment.Charge{ID: ch.ID, Amount: 4900, Currency: "eur", Status: payment.StatusSucceeded, CardLast4: "4242"}
	if ch != want {
		t.Errorf("got %+v, want %+v", ch, want)
	}
	if got := p.rows(t, "k1"); got != 1 {
		t.Errorf("got %d rows, want 1", got)
	}
}

func TestChargeSameKeyTwice(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	c := p.client(5 * time.Second)
	first, err := c.Charge(t.Context(), request("k1"))
	if err != nil {
		t.Fatalf("first Charge: %v", err)
	}
	second, err := c.Charge(t.Context(), request("k1"))
	if err != nil {
		t.Fatalf("second Charge: %v", err)
	}
	if second.ID != first.ID {
		t.Errorf("got id %q, want %q", second.ID, first.ID)
	}
	if first.Replayed || !second.Replayed {
		t.Errorf("got replayed %v then %v, want false then true", first.Replayed, second.Replayed)
	}
	if got := p.rows(t, "k1"); got != 1 {
		t.Errorf("got %d rows, want 1", got)
	}
}

func TestChargeConcurrentSameKey(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	c := p.client(10 * time.Second)
	const n = 10
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ch, err := c.Charge(t.Context(), request("k1"))
			ids[i], errs[i] = ch.ID, err
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Errorf("call %d: got id %q, want %q", i, ids[i], ids[0])
		}
	}
	if got := p.rows(t, "k1"); got != 1 {
		t.Errorf("got %d rows, want 1", got)
	}
}

func TestChargeKeyReusedWithOtherParams(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	c := p.client(5 * time.Second)
	if _, err := c.Charge(t.Context(), request("k1")); err != nil {
		t.Fatalf("first Charge: %v", err)
	}
	req := request("k1")
	req.Amount = 5000
	_, err := c.Charge(t.Context(), req)
	var pe *payment.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v, want *payment.ProviderError", err)
	}
	if pe.Status != http.StatusBadRequest || pe.Type != "idempotency_error" {
		t.Errorf("got status %d type %q, want 400 idempotency_error", pe.Status, pe.Type)
	}
	if got := p.rows(t, "k1"); got != 1 {
		t.Errorf("got %d rows, want 1", got)
	}
}

func TestChargeInvalidCard(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	req := request("k1")
	req.Card = "4242 4242 42x4 4242"
	_, err := p.client(5*time.Second).Charge(t.Context(), req)
	var pe *payment.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v, want *payment.ProviderError", err)
	}
	if pe.Status != http.StatusBadRequest {
		t.Errorf("got status %d, want 400", pe.Status)
	}
	if strings.Contains(err.Error(), "42x4") {
		t.Errorf("error %q quotes the card", err)
	}
	if got := p.rows(t, "k1"); got != 0 {
		t.Errorf("got %d rows, want 0", got)
	}
}

func TestChargeDeclined(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	c := p.client(5 * time.Second)
	req := request("k1")
	req.Card = fakeprovider.DeclinedCard

	var ids []string
	for range 2 { // the second call is a replay
		_, err := c.Charge(t.Context(), req)
		var de *payment.DeclinedError
		if !errors.As(err, &de) {
			t.Fatalf("got error %v, want *payment.DeclinedError", err)
		}
		checkNoSecrets(t, err)
		if de.ChargeID == "" || de.Message == "" {
			t.Errorf("got %+v, want a charge id and a message", de)
		}
		ids = append(ids, de.ChargeID)
	}
	if ids[0] != ids[1] {
		t.Errorf("got charge ids %q and %q, want the same", ids[0], ids[1])
	}
	if got := p.rows(t, "k1"); got != 1 {
		t.Errorf("got %d rows, want 1", got)
	}
	found, err := c.FindCharge(t.Context(), "k1")
	if err != nil {
		t.Fatalf("FindCharge: %v", err)
	}
	if found.ID != ids[0] || found.Status != payment.StatusDeclined || found.CardLast4 != "0002" {
		t.Errorf("got %+v, want charge %s declined on card 0002", found, ids[0])
	}
}

func TestFaultDecline(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.setBehaviour(t, fakeprovider.Behaviour{Fail: fakeprovider.FaultDecline})
	_, err := p.client(5*time.Second).Charge(t.Context(), request("k1"))
	var de *payment.DeclinedError
	if !errors.As(err, &de) {
		t.Fatalf("got error %v, want *payment.DeclinedError", err)
	}
	if got := p.rows(t, "k1"); got != 1 {
		t.Errorf("got %d rows, want 1", got)
	}
}

func TestFaultBeforeCharge(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.setBehaviour(t, fakeprovider.Behaviour{Fail: fakeprovider.FaultBeforeCharge})
	c := p.client(5 * time.Second)
	_, err := c.Charge(t.Context(), request("k1"))
	ue := unavailable(t, err)
	if ue.Reason != payment.ReasonFailed || ue.Status != http.StatusInternalServerError {
		t.Errorf("got reason %v status %d, want failed 500", ue.Reason, ue.Status)
	}
	if got := p.rows(t, "k1"); got != 0 {
		t.Errorf("got %d rows, want 0", got)
	}
	if _, err := c.FindCharge(t.Context(), "k1"); !errors.Is(err, payment.ErrNoCharge) {
		t.Errorf("FindCharge: got error %v, want ErrNoCharge", err)
	}
}

func TestFaultAfterCharge(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.setBehaviour(t, fakeprovider.Behaviour{Fail: fakeprovider.FaultAfterCharge})
	c := p.client(5 * time.Second)
	_, err := c.Charge(t.Context(), request("k1"))
	ue := unavailable(t, err)
	if ue.Reason != payment.ReasonFailed {
		t.Errorf("got reason %v, want failed", ue.Reason)
	}
	if got := p.rows(t, "k1"); got != 1 {
		t.Errorf("got %d rows, want 1", got)
	}

	found, err := c.FindCharge(t.Context(), "k1")
	if err != nil {
		t.Fatalf("FindCharge: %v", err)
	}
	if found.Status != payment.StatusSucceeded {
		t.Errorf("got status %q, want %q", found.Status, payment.StatusSucceeded)
	}

	p.setBehaviour(t, fakeprovider.Behaviour{})
	retried, err := c.Charge(t.Context(), request("k1"))
	if err != nil {
		t.Fatalf("retried Charge: %v", err)
	}
	if retried.ID != found.ID || !retried.Replayed {
		t.Errorf("got id %q replayed %v, want id %q replayed", retried.ID, retried.Replayed, found.ID)
	}
	if got := p.rows(t, "k1"); got != 1 {
		t.Errorf("got %d rows after retry, want 1", got)
	}
}

func TestFaultTimeout(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.setBehaviour(t, fakeprovider.Behaviour{Fail: fakeprovider.FaultTimeout})
	start := time.Now()
	// A client timeout long enough for the request to reach the provider
	// even on a loaded machine: one that gives up before the request
	// arrives rightly leaves nothing charged, which is not this test.
	_, err := p.client(time.Second).Charge(t.Context(), request("k1"))
	ue := unavailable(t, err)
	if ue.Reason != payment.ReasonTimeout {
		t.Errorf("got reason %v, want timeout", ue.Reason)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got error %v, want one wrapping context.DeadlineExceeded", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("call took %v, want about 1s", elapsed)
	}

	// The provider charges after the client has given up.
	deadline := time.Now().Add(30 * time.Second)
	for p.rows(t, "k1") != 1 {
		if time.Now().After(deadline) {
			t.Fatal("no charge recorded 30s after the timeout, want one")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDelayShorterThanTimeout(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.setBehaviour(t, fakeprovider.Behaviour{Delay: 50 * time.Millisecond})
	if _, err := p.client(5*time.Second).Charge(t.Context(), request("k1")); err != nil {
		t.Fatalf("Charge: %v", err)
	}
}

func TestCallerDeadline(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	p.setBehaviour(t, fakeprovider.Behaviour{Delay: 5 * time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := p.client(0).Charge(ctx, request("k1"))
	if ue := unavailable(t, err); ue.Reason != payment.ReasonTimeout {
		t.Errorf("got reason %v, want timeout", ue.Reason)
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := payment.NewClient(url+"/provider", secret, 5*time.Second).Charge(t.Context(), request("k1"))
	if ue := unavailable(t, err); ue.Reason != payment.ReasonUnreachable {
		t.Errorf("got reason %v (%v), want unreachable", ue.Reason, err)
	}
}

func TestWrongSecret(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	c := payment.NewClient(p.url, "sk_wrong", 5*time.Second)
	_, err := c.Charge(t.Context(), request("k1"))
	var pe *payment.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("got error %v, want *payment.ProviderError", err)
	}
	if pe.Status != http.StatusUnauthorized {
		t.Errorf("got status %d, want 401", pe.Status)
	}
	if strings.Contains(err.Error(), "sk_wrong") {
		t.Errorf("error %q contains the secret", err)
	}
	if got := p.rows(t, "k1"); got != 0 {
		t.Errorf("got %d rows, want 0", got)
	}
}

func TestFindChargeMissing(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	if _, err := p.client(5*time.Second).FindCharge(t.Context(), "nope"); !errors.Is(err, payment.ErrNoCharge) {
		t.Errorf("got error %v, want ErrNoCharge", err)
	}
}

// A 404 that is not the provider saying "no such charge" must not pass for
// one, or a completer would conclude that nothing was charged.
func TestFindChargeWrongBaseURL(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	c := payment.NewClient(strings.TrimSuffix(p.url, "/provider")+"/elsewhere", secret, 5*time.Second)
	_, err := c.FindCharge(t.Context(), "k1")
	if errors.Is(err, payment.ErrNoCharge) {
		t.Fatal("got ErrNoCharge from a route that does not exist, want another error")
	}
	var pe *payment.ProviderError
	if !errors.As(err, &pe) || pe.Status != http.StatusNotFound {
		t.Errorf("got error %v, want *payment.ProviderError with status 404", err)
	}
}
