// Package payment is the order engine's client for the payment provider's
// charges API. It sorts every way a call can end into the few outcomes a
// caller must treat differently: a charge; a decline, which is definite (no
// money moved); an unavailable provider, after which the outcome may be
// unknown and the caller retries with the same idempotency key or settles it
// with Cancel; a canceled operation (ErrCanceled), which is a definite "no
// charge"; and a provider error, which means a bug on our side. It also
// lists charges and refunds them, for the reconciler.
package payment

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// maxResponseBytes bounds what is read of an answer; a charge is a few
// hundred bytes.
const maxResponseBytes = 1 << 20

// Client calls the provider. It is safe for concurrent use and holds a pool
// of keep-alive connections, so one Client should serve the whole process.
type Client struct {
	baseURL string
	secret  string
	timeout time.Duration
	http    *http.Client
}

// NewClient returns a client of the provider at baseURL (for example
// http://127.0.0.1:8080/provider) that authenticates with secret. Each call
// is bounded by timeout (none if zero) on top of the caller's context.
func NewClient(baseURL, secret string, timeout time.Duration) *Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	// The default keeps 2 idle connections per host; under a burst of
	// concurrent checkouts every other call would open a new connection.
	transport.MaxIdleConns = 100
	transport.MaxIdleConnsPerHost = 64
	transport.IdleConnTimeout = 90 * time.Second
	return &Client{
		baseURL: strings.TrimRight(baseURL, "/"),
		secret:  secret,
		timeout: timeout,
		http: &http.Client{
			Transport: transport,
			// The API never redirects; following one would resend a charge
			// to wherever it pointed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// response is a provider's answer, read in full.
type response struct {
	status   int
	body     []byte
	replayed bool
}

// do sends one request and reads the answer. Its error is always an
// *UnavailableError: no answer came back.
func (c *Client) do(ctx context.Context, method, path, idempotencyKey string, body []byte) (response, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		// A bytes.Reader lets the transport resend the body when a pooled
		// connection turns out to be dead before the request left; it does
		// so for POSTs only because they carry an Idempotency-Key.
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, rd)
	if err != nil {
		// Only a malformed base URL gets here, which is a configuration bug.
		return response{}, &UnavailableError{Reason: ReasonUnreachable, Err: fmt.Errorf("new request: %w", err)}
	}
	req.Header.Set("Authorization", "Bearer "+c.secret)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}

	resp, err := c.http.Do(req)
	if err != nil {
		return response{}, unavailable(ctx, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		uerr := unavailable(ctx, err)
		uerr.Status = resp.StatusCode
		return response{}, uerr
	}
	return response{
		status:   resp.StatusCode,
		body:     b,
		replayed: resp.Header.Get("Idempotent-Replayed") == "true",
	}, nil
}
