package app_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"exactlyonce/internal/app"
	"exactlyonce/internal/apptest"
)

// TestProviderOfItsOwn runs the provider as `web provider` builds it, apart
// from the shop, and the shop with STRIPE_API_BASE pointing at it: the order is
// charged there, and the provider's demo control needs the secret.
func TestProviderOfItsOwn(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	const secret = "sk_test_own"
	h, p, err := app.NewProvider(t.Context(), pool, app.ProviderConfig{Secret: secret, Demo: true, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	provider := httptest.NewServer(h)
	t.Cleanup(func() { provider.Close(); p.Close() })

	shop := apptest.NewOnPool(t, pool, func(cfg *app.Config) {
		cfg.StripeAPIBase, cfg.StripeSecretKey = provider.URL, secret
	})
	if shop.App.Provider != nil {
		t.Error("the shop runs a provider of its own although STRIPE_API_BASE is set")
	}
	c := shop.NewCustomer(t)
	if r := shop.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("order: got %d %s, want 201", r.Status, r.Body)
	}
	shop.WantStats(t, 1, 1)

	put := func(auth string) int {
		req, _ := http.NewRequest(http.MethodPut, provider.URL+"/provider/demo/behaviour", strings.NewReader(`{"delay_ms":0,"fail":"decline"}`))
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := put("Bearer wrong"); got != http.StatusUnauthorized {
		t.Errorf("set behaviour with a wrong secret: got %d, want 401", got)
	}
	if got := put("Bearer " + secret); got != http.StatusOK {
		t.Fatalf("set behaviour: got %d, want 200", got)
	}
	if r := shop.PlaceOrder(t, c, "k2", oneMug); r.Status != http.StatusPaymentRequired {
		t.Errorf("order after the provider was set to decline: got %d %s, want 402", r.Status, r.Body)
	}
}
