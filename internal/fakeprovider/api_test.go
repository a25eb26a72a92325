package fakeprovider_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"exactlyonce/internal/database"
	"exactlyonce/internal/fakeprovider"
	"exactlyonce/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const secret = "sk_test_fake"

type server struct {
	pool *pgxpool.Pool
	url  string
}

func newServer(tb testing.TB) *server {
	tb.Helper()
	pool := pgtest.NewPool(tb)
	p := fakeprovider.New(database.New(pool), secret, fakeprovider.WithLogger(slog.New(slog.DiscardHandler)))
	e := echo.New()
	p.Register(e.Group("/provider"))
	srv := httptest.NewServer(e)
	tb.Cleanup(srv.Close)
	return &server{pool: pool, url: srv.URL + "/provider"}
}

type answer struct {
	status int
	header http.Header
	body   string
}

// call sends one request with the right secret unless header overrides it.
func (s *server) call(tb testing.TB, method, path, body string, header map[string]string) answer {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), method, s.url+path, strings.NewReader(body))
	if err != nil {
		tb.Fatalf("new request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("read body: %v", err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// errorOf decodes an answer in the provider's error shape.
func errorOf(tb testing.TB, a answer) (typ, code string) {
	tb.Helper()
	var env struct {
		Error struct{ Type, Code, Message string }
	}
	if err := json.Unmarshal([]byte(a.body), &env); err != nil || env.Error.Type == "" || env.Error.Message == "" {
		tb.Fatalf("got body %s, want {\"error\":{\"type\":…,\"message\":…}}", a.body)
	}
	return env.Error.Type, env.Error.Code
}

const chargeBody = `{"amount": 4900, "currency": "eur", "card": "4242 4242 4242 4242", "description": "order 1"}`

func TestReplayIsIdentical(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, tc := range []struct {
		name, body string
		want       int
	}{
		{"succeeded", chargeBody, http.StatusCreated},
		{"declined", `{"amount": 4900, "currency": "eur", "card": "` + fakeprovider.DeclinedCard + `"}`, http.StatusPaymentRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := map[string]string{"Idempotency-Key": tc.name}
			first := s.call(t, http.MethodPost, "/v1/charges", tc.body, key)
			second := s.call(t, http.MethodPost, "/v1/charges", tc.body, key)
			if first.status != tc.want || second.status != tc.want {
				t.Errorf("got statuses %d and %d, want %d twice", first.status, second.status, tc.want)
			}
			if second.body != first.body {
				t.Errorf("got replayed body %s, want %s", second.body, first.body)
			}
			if got := first.header.Get("Idempotent-Replayed"); got != "" {
				t.Errorf("first call: got Idempotent-Replayed %q, want none", got)
			}
			if got := second.header.Get("Idempotent-Replayed"); got != "true" {
				t.Errorf("second call: got Idempotent-Replayed %q, want true", got)
			}
		})
	}
}

func TestChargeShape(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	a := s.call(t, http.MethodPost, "/v1/charges", chargeBody, map[string]string{"Idempotency-Key": "k1"})
	if a.status != http.StatusCreated {
		t.Fatalf("got status %d (%s), want 201", a.status, a.body)
	}
	var ch map[string]any
	if err := json.Unmarshal([]byte(a.body), &ch); err != nil {
		t.Fatalf("decode %s: %v", a.body, err)
	}
	for field, want := range map[string]any{
		"amount": 4900.0, "currency": "eur", "status": "succeeded", "card_last4": "4242", "description": "order 1",
	} {
		if ch[field] != want {
			t.Errorf("%s: got %v, want %v", field, ch[field], want)
		}
	}
	id, _ := ch["id"].(string)
	if created, _ := ch["created"].(float64); !strings.HasPrefix(id, "ch_") || created <= 0 {
		t.Errorf("got id %v created %v, want ch_… and a unix time", ch["id"], ch["created"])
	}

	for _, path := range []string{"/v1/charges/" + id, "/v1/charges?idempotency_key=k1"} {
		got := s.call(t, http.MethodGet, path, "", nil)
		if got.status != http.StatusOK || got.body != a.body {
			t.Errorf("GET %s: got %d %s, want 200 %s", path, got.status, got.body, a.body)
		}
	}
}

// The full card number must be nowhere in the database.
func TestCardNumberNotStored(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	s.call(t, http.MethodPost, "/v1/charges", chargeBody, map[string]string{"Idempotency-Key": "k1"})
	var row string
	err := s.pool.QueryRow(context.Background(), "SELECT c::text FROM provider.charges c").Scan(&row)
	if err != nil {
		t.Fatalf("read charge: %v", err)
	}
	if strings.Contains(row, "4242424242424242") || strings.Contains(row, "4242 4242") {
		t.Errorf("got row %s, want no full card number", row)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	key := map[string]string{"Idempotency-Key": "k1"}
	for _, tc := range []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		typ, code                string
	}{
		{"no key", http.MethodPost, "/v1/charges", chargeBody, nil, 400, "invalid_request_error", "idempotency_key_missing"},
		{"zero amount", http.MethodPost, "/v1/charges", `{"amount": 0, "currency": "eur", "card": "4242424242424242"}`, key, 400, "invalid_request_error", "parameter_invalid"},
		{"fractional amount", http.MethodPost, "/v1/charges", `{"amount": 49.5, "currency": "eur", "card": "4242424242424242"}`, key, 400, "invalid_request_error", "parameter_invalid"},
		{"upper-case currency", http.MethodPost, "/v1/charges", `{"amount": 1, "currency": "EUR", "card": "4242424242424242"}`, key, 400, "invalid_request_error", "parameter_invalid"},
		{"short card", http.MethodPost, "/v1/charges", `{"amount": 1, "currency": "eur", "card": "42424242424"}`, key, 400, "invalid_request_error", "parameter_invalid"},
		{"long card", http.MethodPost, "/v1/charges", `{"amount": 1, "currency": "eur", "card": "42424242424242424242"}`, key, 400, "invalid_request_error", "parameter_invalid"},
		{"unknown field", http.MethodPost, "/v1/charges", `{"amount": 1, "currency": "eur", "card": "4242424242424242", "cvc": "123"}`, key, 400, "invalid_request_error", "body_invalid"},
		{"not json", http.MethodPost, "/v1/charges", `amount=1`, key, 400, "invalid_request_error", "body_invalid"},
		{"no secret", http.MethodPost, "/v1/charges", chargeBody, map[string]string{"Authorization": "", "Idempotency-Key": "k1"}, 401, "authentication_error", ""},
		{"wrong secret", http.MethodGet, "/v1/charges/ch_1", "", map[string]string{"Authorization": "Bearer " + secret + "x"}, 401, "authentication_error", ""},
		{"unknown charge", http.MethodGet, "/v1/charges/ch_1", "", nil, 404, "invalid_request_error", "resource_missing"},
		{"unknown key", http.MethodGet, "/v1/charges?idempotency_key=nope", "", nil, 404, "invalid_request_error", "resource_missing"},
		{"empty key to look up", http.MethodGet, "/v1/charges?idempotency_key=", "", nil, 400, "invalid_request_error", "parameter_missing"},
		{"bad list limit", http.MethodGet, "/v1/charges?limit=0", "", nil, 400, "invalid_request_error", "parameter_invalid"},
		{"cancel without key", http.MethodPost, "/v1/charges/cancel", `{}`, nil, 400, "invalid_request_error", "parameter_invalid"},
		{"refund without key", http.MethodPost, "/v1/refunds", `{"charge": "ch_1"}`, nil, 400, "invalid_request_error", "idempotency_key_missing"},
		{"refund of unknown charge", http.MethodPost, "/v1/refunds", `{"charge": "ch_1"}`, key, 404, "invalid_request_error", "resource_missing"},
		{"unknown route", http.MethodGet, "/v1/disputes", "", nil, 404, "invalid_request_error", "route_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := s.call(t, tc.method, tc.path, tc.body, tc.header)
			if a.status != tc.status {
				t.Errorf("got status %d (%s), want %d", a.status, a.body, tc.status)
			}
			typ, code := errorOf(t, a)
			if typ != tc.typ || code != tc.code {
				t.Errorf("got type %q code %q, want %q %q", typ, code, tc.typ, tc.code)
			}
			if strings.Contains(a.body, "4242424242") {
				t.Errorf("got body %s, want no card number in it", a.body)
			}
		})
	}
	var n int
	if err := s.pool.QueryRow(context.Background(), "SELECT count(*) FROM provider.charges").Scan(&n); err != nil {
		t.Fatalf("count charges: %v", err)
	}
	if n != 0 {
		t.Errorf("got %d charges after refusals, want 0", n)
	}
}
