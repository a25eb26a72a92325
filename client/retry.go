package client

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// retryable reports whether a status may change on retry with the same key:
// a request still in progress (409), rate limiting (429), a server error
// whose outcome is not known (500: Stripe's conventions treat it as
// indeterminate, and a retry with the same key either replays what was
// stored or resumes the operation without doing it twice), or a gateway or
// provider failure the server resumes (502, 503, 504). A 400, 401, 404 or
// 422 is the same answer every time, and any other 4xx (a 402 declined
// card) is a stored, final outcome.
func retryable(status int) bool {
	switch status {
	case http.StatusConflict, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// soldOut is the problem type of a 409 that no retry with the same key
// changes by itself: too little stock was left, so nothing was claimed (the
// retry is a fresh attempt, placed only if stock came in meanwhile).
const soldOut = "/problems/sold-out"

// retryableAnswer is retryable for an answer's status and body: a 409
// sold-out is returned to the caller, who changes the order or tells the
// customer, instead of being asked again until the retry budget is spent.
func retryableAnswer(status int, body []byte) bool {
	if status == http.StatusConflict {
		var p struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(body, &p) == nil && p.Type == soldOut {
			return false
		}
	}
	return retryable(status)
}

// backoff is the wait before retry number attempt (0 for the first retry):
// "full jitter", a uniform random time up to base·2^attempt capped at max,
// so clients that failed together do not retry together. A Retry-After from
// the server replaces it as the wait, plus up to base of jitter for the same
// reason: retrying sooner would only meet the same 409.
func backoff(attempt int, base, max, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter + jitter(base)
	}
	ceiling := max
	if attempt < 30 && base<<attempt < max {
		ceiling = base << attempt
	}
	return jitter(ceiling)
}

// Backoff is the wait before retry number retry (0 for the first) of a
// request that got header as its answer, nil after a network error: the
// client's own backoff, or the answer's Retry-After plus jitter. PlaceOrder
// waits this long between attempts; it is exported for a caller's requests
// that PlaceOrder does not make, so that they wait the same way.
func (c *Client) Backoff(retry int, header http.Header) time.Duration {
	return backoff(retry, c.BaseDelay, c.MaxDelay, RetryAfter(header, time.Now()))
}

// jitter is a uniform random duration in [0, d].
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(d) + 1))
}

// RetryAfter reads an answer's Retry-After header in either of its forms
// (RFC 9110): delay-seconds, or an HTTP date, counted from now. It is 0
// when there is none, or it is unreadable or past. Exported for programs
// that wait as this client does (idemcheck).
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
