package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/smtp"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The order floor is what a new order's exchanges alone cost a Go process
// on this machine, with none of the shop's own work between them: the
// order's request read and answered as the replay floor answers, the round
// trips the shop made to PostgreSQL per order (counted in the same run;
// a one-row SELECT each, autocommit), the provider's create and confirm as
// form POSTs to another bare server with each JSON answer decoded, the
// provider's webhook read and answered, and the receipt's mail sent over
// SMTP on a connection of its own, as the shop's mail job sends it. The
// shop's CPU per order can then be split into what its exchanges cost any
// Go program and what its own work adds. It leaves out what the exchanges'
// real statements cost PostgreSQL (the round trips here are trivial), so
// it is a floor of the shop's process's CPU, not of the order's rate.

// OrderFloor serves the order floor's two requests: POST /order (the
// order, with its round trips, provider calls and mail) and anything else
// (the webhook, answered as the replay floor answers).
type OrderFloor struct {
	DB       *pgxpool.Pool
	Provider string // the bare server standing for the provider, http://host:port
	SMTP     string // the mail catcher's host:port
	Client   *http.Client
}

// ServeHTTP answers one of the order floor's requests.
func (f *OrderFloor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/order" {
		floor(w, r)
		return
	}
	n, err := strconv.Atoi(r.URL.Query().Get("statements"))
	if err != nil || n < 0 || n > 100 {
		http.Error(w, "statements: 0 to 100", http.StatusBadRequest)
		return
	}
	if err := f.order(r.Context(), r.Body, n); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Location", "/api/orders/00000000-0000-4000-8000-000000000000")
	w.WriteHeader(http.StatusCreated)
	w.Write(floorReceipt)
}

func (f *OrderFloor) order(ctx context.Context, body io.Reader, statements int) error {
	var order struct {
		Items []struct {
			SKU      string `json:"sku"`
			Quantity int    `json:"quantity"`
		} `json:"items"`
	}
	if err := json.NewDecoder(body).Decode(&order); err != nil {
		return fmt.Errorf("decode the order: %w", err)
	}
	for i := range statements {
		var got int64
		if err := f.DB.QueryRow(ctx, "SELECT $1::bigint", int64(i)).Scan(&got); err != nil {
			return fmt.Errorf("round trip %d: %w", i, err)
		}
	}
	key := newFloorKey()
	for _, call := range []string{"/v1/payment_intents", "/v1/payment_intents/pi_floor/confirm"} {
		if err := f.call(ctx, call, key); err != nil {
			return err
		}
	}
	return smtp.SendMail(f.SMTP, nil, "shop@example.test", []string{"shopper@example.test"}, floorMail)
}

// call POSTs a Stripe-shaped form to the provider's stand-in and decodes
// its JSON answer, as stripe-go does.
func (f *OrderFloor) call(ctx context.Context, path, key string) error {
	form := url.Values{"amount": {"1200"}, "currency": {"eur"}, "confirm": {"true"},
		"payment_method": {"pm_card_visa"}, "metadata[order_key]": {key}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.Provider+path, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Idempotency-Key", key)
	resp, err := f.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var answer map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	return nil
}

func newFloorKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// floorMail is about the size of the shop's receipt mail.
var floorMail = []byte("From: shop@example.test\r\nTo: shopper@example.test\r\nSubject: Your order #A838A792\r\n" +
	"Message-ID: <floor@example.test>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
	strings.Repeat("Espresso mug × 1, €12.00. Thank you for your order.\r\n", 12))

// OrderFloorAt is the load test's client of the order floor at base: the
// shop's new-order request with worker w's key fresh each time, then a
// webhook-sized POST, as the provider would send the shop.
func (s *Shop) OrderFloorAt(base string, statements int) (func(ctx context.Context, w int) error, error) {
	base, err := loopback(base)
	if err != nil {
		return nil, err
	}
	order := base + "/order?statements=" + strconv.Itoa(statements)
	return func(ctx context.Context, w int) error {
		body := `{"items":[{"sku":"` + s.sku + `","quantity":1}]}`
		if err := s.post(ctx, order, body, w); err != nil {
			return err
		}
		return s.post(ctx, base+"/webhook", floorEvent, w)
	}, nil
}

func (s *Shop) post(ctx context.Context, url, body string, w int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.tokens[w])
	req.Header.Set("Idempotency-Key", `"`+newFloorKey()+`"`)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST %s: %s: %.200s", url, resp.Status, b)
	}
	return nil
}

// floorEvent is about the size of the provider's payment_intent.succeeded
// event.
var floorEvent = `{"id":"evt_floor","object":"event","type":"payment_intent.succeeded","data":{"object":{` +
	`"id":"pi_floor","object":"payment_intent","amount":1200,"currency":"eur","status":"succeeded",` +
	`"latest_charge":"ch_floor","metadata":{"order_key":"` + strings.Repeat("k", 64) + `"},` +
	`"description":"` + strings.Repeat("x", 720) + `"}}}`
