package idemcheck

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// response is one answer read whole, or the transport error instead.
type response struct {
	Status int
	Header http.Header
	Body   []byte
	Err    error
}

func (r response) success() bool { return r.Err == nil && r.Status >= 200 && r.Status < 300 }

func (r response) replayed() bool {
	return strings.EqualFold(r.Header.Get("Idempotent-Replayed"), "true")
}

// String is how a response appears in a scenario's detail.
func (r response) String() string {
	if r.Err != nil {
		return "error: " + r.Err.Error()
	}
	body := string(r.Body)
	if len(body) > 200 {
		body = body[:200] + "…"
	}
	return fmt.Sprintf("%d %s", r.Status, strings.TrimSpace(body))
}

// keyValue is what goes in the key header: absent (nil), a key written the
// profile's way, or raw bytes for the malformed-key scenario.
type keyValue *string

func (c *Checker) key(k string) keyValue {
	if c.profile.QuoteKey {
		k = strconv.Quote(k)
	}
	return &k
}

func raw(v string) keyValue { return &v }

// newKey returns a fresh key: 26 random base32 characters.
func newKey() string { return "idemcheck-" + rand.Text() }

// body fills the template's placeholder with n.
func (c *Checker) body(n int) string {
	return strings.ReplaceAll(c.cfg.Body, Placeholder, strconv.Itoa(n))
}

// send makes one request to the operation as caller cred.
func (c *Checker) send(ctx context.Context, cred Credential, key keyValue, body string) response {
	return c.do(ctx, c.cfg.Method, c.cfg.Path, cred, key, body)
}

func (c *Checker) do(ctx context.Context, method, path string, cred Credential, key keyValue, body string) response {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.BaseURL+path, rd)
	if err != nil {
		return response{Err: err}
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, v := range cred.Headers {
		req.Header.Set(name, v)
	}
	if key != nil {
		req.Header.Set(c.cfg.KeyHeader, *key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return response{Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b, Err: err}
}

// resourceID is the id of what a success created: the value at IDPointer,
// or the Location header. "" when there is none.
func (c *Checker) resourceID(r response) string {
	if !r.success() {
		return ""
	}
	if c.cfg.IDPointer == "" {
		return r.Header.Get("Location")
	}
	v, err := pointer(r.Body, c.cfg.IDPointer)
	if err != nil || v == nil {
		return ""
	}
	return fmtValue(v)
}

// fmtValue writes a decoded JSON scalar as text: an id, a token, a number.
func fmtValue(v any) string { return fmt.Sprint(v) }

// pointer resolves a JSON pointer (RFC 6901) in a JSON document.
func pointer(doc []byte, ptr string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if ptr == "" {
		return v, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("JSON pointer %q does not start with /", ptr)
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch node := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = node[tok]; !ok {
				return nil, fmt.Errorf("JSON pointer %q: no member %q", ptr, tok)
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(node) {
				return nil, fmt.Errorf("JSON pointer %q: no element %q", ptr, tok)
			}
			v = node[i]
		default:
			return nil, fmt.Errorf("JSON pointer %q: %q is inside a scalar", ptr, tok)
		}
	}
	return v, nil
}

// sameBody says whether two bodies are the same document: equal bytes, or
// equal JSON values (a replay need not keep the original's whitespace).
func sameBody(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}
