package fakestripe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Control is a client of a fake's control API (RegisterDemo) over HTTP, for
// whoever sets its faults and reads its charges from another process: the
// lab, the chaos harness, the load test. Its methods are those of Provider,
// so code written against either works with both.
type Control struct {
	// Base is the fake's base URL (STRIPE_API_BASE), Secret its secret key.
	Base, Secret string
	// HTTP is the client used; nil means one with controlTimeout.
	HTTP *http.Client
}

// controlTimeout bounds one call to the control API: a fake that does not
// answer in it is down, and the caller says so.
const controlTimeout = 10 * time.Second

// Behaviour returns the fake's behaviour, or the zero value (a healthy
// provider) when it cannot be read: for pages that show it.
func (c *Control) Behaviour() Behaviour {
	var b Behaviour
	if err := c.call(context.Background(), http.MethodGet, "/provider/demo/behaviour", nil, &b); err != nil {
		return Behaviour{}
	}
	return b
}

// SetBehaviour sets the faults of the fake's following charging calls.
func (c *Control) SetBehaviour(b Behaviour) error {
	body, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("set behaviour: %w", err)
	}
	return c.call(context.Background(), http.MethodPut, "/provider/demo/behaviour", body, nil)
}

// IntentsByMetadata returns the intents whose metadata holds every pair of
// match, oldest first.
func (c *Control) IntentsByMetadata(ctx context.Context, match map[string]string) ([]Intent, error) {
	q := url.Values{}
	for k, v := range match {
		q.Set("metadata["+k+"]", v)
	}
	var out struct {
		Data []Intent `json:"data"`
	}
	if err := c.call(ctx, http.MethodGet, "/provider/demo/intents?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// Succeeded returns how many intents succeeded.
func (c *Control) Succeeded(ctx context.Context) (int64, error) {
	var out struct {
		Succeeded int64 `json:"succeeded"`
	}
	if err := c.call(ctx, http.MethodGet, "/provider/demo/succeeded", nil, &out); err != nil {
		return 0, err
	}
	return out.Succeeded, nil
}

func (c *Control) call(ctx context.Context, method, path string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("fake control %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: controlTimeout}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("fake control %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("fake control %s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fake control %s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(got))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(got, out); err != nil {
		return fmt.Errorf("fake control %s %s: %w", method, path, err)
	}
	return nil
}
