package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Client calls one shop as one customer.
type Client struct {
	BaseURL string
	Token   string
	Keys    KeyStore
	HTTP    *http.Client
	// BaseDelay and MaxDelay shape the backoff (see backoff); MaxElapsed
	// bounds the retrying of one call, after which it reconciles and, if
	// the outcome is still open, returns ErrUnsettled with the key kept.
	BaseDelay, MaxDelay, MaxElapsed time.Duration
	// Observe, when set, hears every attempt and wait: a program can log
	// them, a UI can show them. (The lab and the chaos harness record the
	// answers themselves, in the transport they give HTTP.)
	Observe func(Event)

	mu     sync.Mutex
	policy *Policy
}

// Event is one step of an operation, for Observe.
type Event struct {
	Op, Key string
	Attempt int // 1 for the first send
	Status  int // 0 on a network error
	Err     error
	// Wait is how long the client sleeps before the next attempt; 0 when
	// this attempt settled the operation.
	Wait time.Duration
	Note string
}

// New returns a client with the default backoff: 100 ms doubling up to
// 5 s, for at most 2 minutes a call.
func New(baseURL, token string, keys KeyStore) *Client {
	return &Client{
		BaseURL: strings.TrimRight(baseURL, "/"), Token: token, Keys: keys,
		HTTP:      &http.Client{Timeout: 30 * time.Second},
		BaseDelay: 100 * time.Millisecond, MaxDelay: 5 * time.Second, MaxElapsed: 2 * time.Minute,
	}
}

// Policy is the server's published idempotency policy.
type Policy struct {
	RetentionSeconds   int64 `json:"retention_seconds"`
	LockTimeoutSeconds int64 `json:"lock_timeout_seconds"`
	MaxKeyLength       int   `json:"max_key_length"`
}

// Retention is how long the server remembers a key after its first use.
func (p Policy) Retention() time.Duration { return time.Duration(p.RetentionSeconds) * time.Second }

// Policy reads GET /api/idempotency-policy once and keeps it.
func (c *Client) Policy(ctx context.Context) (Policy, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.policy != nil {
		return *c.policy, nil
	}
	var p Policy
	if err := c.getJSON(ctx, "/api/idempotency-policy", &p); err != nil {
		return Policy{}, fmt.Errorf("read idempotency policy: %w", err)
	}
	if p.RetentionSeconds <= 0 {
		return Policy{}, fmt.Errorf("the server publishes no retention (%d s)", p.RetentionSeconds)
	}
	c.policy = &p
	return p, nil
}

// retryDeadline is when retrying a key must stop: half the retention after
// the key was made. The margin covers clock skew between client and server
// and a last request still in flight; past the window the same key would
// be a new operation, so stopping late is the one mistake to avoid.
func retryDeadline(e Entry, p Policy) time.Time {
	return e.Created.Add(p.Retention() / 2)
}

// reply is one HTTP answer read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (c *Client) send(ctx context.Context, method, path string, body []byte, header http.Header) (reply, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return reply{}, err
	}
	for name, vs := range header {
		req.Header[name] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// getJSON is a GET that must answer 200 with JSON.
func (c *Client) getJSON(ctx context.Context, path string, v any) error {
	r, err := c.send(ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return problemOf(r)
	}
	return json.Unmarshal(r.body, v)
}

// problemOf decodes an error answer, or describes one that is not a problem.
func problemOf(r reply) *Problem {
	p := &Problem{}
	if json.Unmarshal(r.body, p) != nil || p.Status == 0 {
		p = &Problem{Title: http.StatusText(r.status), Detail: strings.TrimSpace(string(r.body))}
	}
	p.Status = r.status
	return p
}

// networkError reports whether err is a failure to get an answer that a
// retry may fix, as opposed to the caller giving up.
func networkError(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled)
}
