package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"exactlyonce/client"
)

// LockHeader is a request header that sets the lock timeout of one order
// attempt, as a Go duration ("1s"). The lab sends it so that the scenarios
// that wait for a lock to expire wait one second, not the server's thirty,
// without shortening anyone else's locks. The order handler honours it only
// on a demo server.
const LockHeader = "Demo-Lock-Timeout"

// apiClient sends the lab's requests to the shop's JSON API, exactly as an
// outside client would.
type apiClient struct {
	baseURL string
	http    *http.Client
}

func newAPIClient(baseURL string) *apiClient {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// Ten concurrent attempts need ten connections; keep them for the next run.
	t.MaxIdleConnsPerHost = 16
	return &apiClient{baseURL: baseURL, http: &http.Client{Transport: t, Timeout: 30 * time.Second}}
}

// shopper is a customer registered through the API.
type shopper struct {
	ID    uuid.UUID
	Token string
}

func (c *apiClient) newShopper(ctx context.Context, name string) (shopper, error) {
	body, _ := json.Marshal(map[string]string{"name": name})
	resp, err := c.do(ctx, http.MethodPost, "/api/customers", body, nil)
	if err != nil {
		return shopper{}, fmt.Errorf("create shopper: %w", err)
	}
	if resp.status != http.StatusCreated {
		return shopper{}, fmt.Errorf("create shopper: got status %d", resp.status)
	}
	var out struct {
		ID    uuid.UUID `json:"id"`
		Token string    `json:"token"`
	}
	if err := json.Unmarshal(resp.body, &out); err != nil {
		return shopper{}, fmt.Errorf("create shopper: %w", err)
	}
	return shopper{ID: out.ID, Token: out.Token}, nil
}

// orderResponse is what the lab reads from an order response.
type orderResponse struct {
	status     int
	problem    string
	replayed   bool
	retryAfter string
	chargeID   string
	body       []byte
}

// placeOrder posts body under key; lockFor, when set, asks for a lock of
// that length for this request alone.
func (c *apiClient) placeOrder(ctx context.Context, s shopper, key, body string, lockFor time.Duration) (orderResponse, error) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+s.Token)
	h.Set("Idempotency-Key", key)
	if lockFor > 0 {
		h.Set(LockHeader, lockFor.String())
	}
	resp, err := c.do(ctx, http.MethodPost, "/api/orders", []byte(body), h)
	if err != nil {
		return orderResponse{}, err
	}
	return readOrderResponse(resp), nil
}

// putCart creates a cart of s's under id with the lines of body, through
// the cart API, and returns its version.
func (c *apiClient) putCart(ctx context.Context, s shopper, id uuid.UUID, body string) (int64, error) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+s.Token)
	resp, err := c.do(ctx, http.MethodPut, "/api/carts/"+id.String(), []byte(body), h)
	if err != nil {
		return 0, fmt.Errorf("put cart: %w", err)
	}
	if resp.status != http.StatusOK {
		return 0, fmt.Errorf("put cart: got status %d", resp.status)
	}
	var out struct {
		Version int64 `json:"version"`
	}
	if err := json.Unmarshal(resp.body, &out); err != nil {
		return 0, fmt.Errorf("put cart: %w", err)
	}
	return out.Version, nil
}

// orderCart orders version of cart id with no Idempotency-Key of its own:
// the key is the cart version's, as a checkout page's is.
func (c *apiClient) orderCart(ctx context.Context, s shopper, id uuid.UUID, version int64) (orderResponse, error) {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+s.Token)
	h.Set("If-Match", fmt.Sprintf("%q", fmt.Sprint(version)))
	resp, err := c.do(ctx, http.MethodPost, "/api/carts/"+id.String()+"/order", nil, h)
	if err != nil {
		return orderResponse{}, err
	}
	return readOrderResponse(resp), nil
}

// readOrderResponse reads what the lab shows of an order's answer.
func readOrderResponse(resp response) orderResponse {
	out := orderResponse{
		status:     resp.status,
		replayed:   resp.header.Get("Idempotent-Replayed") == "true",
		retryAfter: resp.header.Get("Retry-After"),
		body:       resp.body,
	}
	var decoded struct {
		Type     string `json:"type"`
		ChargeID string `json:"charge_id"`
	}
	if json.Unmarshal(resp.body, &decoded) == nil {
		out.chargeID = decoded.ChargeID
		out.problem = strings.TrimPrefix(decoded.Type, "/problems/")
	}
	return out
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (c *apiClient) do(ctx context.Context, method, path string, body []byte, h http.Header) (response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return response{}, err
	}
	if h != nil {
		req.Header = h
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// goClient returns a Go client (package client) of s's shopper, as a
// program using the API would make one, whose order attempts are recorded
// in rec (see recording).
func (c *apiClient) goClient(s shopper, rec *recorder) *client.Client {
	gc := client.New(c.baseURL, s.Token, &memKeys{entries: map[string]client.Entry{}})
	gc.HTTP = &http.Client{Timeout: c.http.Timeout, Transport: recording{base: c.http.Transport, rec: rec}}
	return gc
}

// clientCall is one call of the Go client, carried in its context for the
// recording transport: the label its attempts are recorded under, and the
// answer of its last attempt.
type clientCall struct {
	label string
	mu    sync.Mutex
	last  orderResponse
}

type clientCallKey struct{}

// recording is the Go client's transport in the lab: it records every order
// attempt the client sends, as session.place records the lab's own.
type recording struct {
	base http.RoundTripper
	rec  *recorder
}

func (t recording) RoundTrip(req *http.Request) (*http.Response, error) {
	call, ok := req.Context().Value(clientCallKey{}).(*clientCall)
	if !ok || req.Method != http.MethodPost || req.URL.Path != "/api/orders" {
		return t.base.RoundTrip(req)
	}
	i := t.rec.begin(call.label, strings.Trim(req.Header.Get("Idempotency-Key"), `"`))
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		t.rec.end(i, orderResponse{}, err)
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		t.rec.end(i, orderResponse{}, err)
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	answer := readOrderResponse(response{status: resp.StatusCode, header: resp.Header, body: b})
	t.rec.end(i, answer, nil)
	call.mu.Lock()
	call.last = answer
	call.mu.Unlock()
	return resp, nil
}

// memKeys is a client.KeyStore in memory. A lab run begins and ends in one
// process, so its keys need not survive a restart, which is what the
// client's file store is for.
type memKeys struct {
	mu      sync.Mutex
	entries map[string]client.Entry
}

func (m *memKeys) Key(op string) (client.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[op]
	if !ok {
		e = client.Entry{Key: client.NewKey(), Created: time.Now()}
		m.entries[op] = e
	}
	return e, nil
}

func (m *memKeys) Put(op string, e client.Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries[op] = e
	return nil
}

func (m *memKeys) Forget(op string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, op)
	return nil
}
