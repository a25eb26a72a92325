package stripehook_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"exactlyonce/internal/database"
	"exactlyonce/internal/stripehook"
	"exactlyonce/internal/web"
)

// TestOutageIsA503: a verified delivery that cannot be handled because the
// database is out of reach is answered as the shop answers every outage,
// 503 with Retry-After, by the shop's one error handler; Stripe delivers
// it again. The chaos run crashes PostgreSQL while the provider sends
// webhooks and counts every 500 in a shop's log as a bug.
func TestOutageIsA503(t *testing.T) {
	t.Parallel()
	// A pool of a server that is not there: every query fails to connect.
	cfg, err := pgxpool.ParseConfig("postgres://postgres@127.0.0.1:1/postgres?connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	e := echo.New()
	e.HTTPErrorHandler = (&web.Errors{Log: slog.New(slog.DiscardHandler)}).Handle
	stripehook.New(database.New(pool), nil, secret, nil, nil).Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)

	payload := fmt.Sprintf(`{"id":"evt_outage","object":"event","api_version":%q,"created":%d,"livemode":false,"pending_webhooks":1,`+
		`"type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","object":"payment_intent","amount":100,"currency":"eur","status":"succeeded","metadata":{}}}}`,
		stripe.APIVersion, time.Now().Unix())
	now := time.Now()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/stripe", strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Stripe-Signature", fmt.Sprintf("t=%d,v1=%s", now.Unix(), hex.EncodeToString(webhook.ComputeSignature(now, []byte(payload), secret))))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("got %d with Retry-After %q, want 503 with a Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
