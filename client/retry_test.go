package client

import (
	"net/http"
	"testing"
	"time"
)

func TestBackoffIsFullJitterUnderItsCeiling(t *testing.T) {
	base, max := 100*time.Millisecond, time.Second
	for attempt, ceiling := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second} {
		for range 100 {
			if got := backoff(attempt, base, max, 0); got < 0 || got > ceiling {
				t.Fatalf("attempt %d: got %v, want within [0, %v]", attempt, got, ceiling)
			}
		}
	}
}

func TestBackoffWaitsAtLeastRetryAfter(t *testing.T) {
	for range 100 {
		if got := backoff(0, 100*time.Millisecond, time.Second, 3*time.Second); got < 3*time.Second || got > 3100*time.Millisecond {
			t.Fatalf("got %v, want Retry-After 3s plus at most 100ms of jitter", got)
		}
	}
}

func TestRetryAfterReadsSecondsAndDates(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{
		{"", 0}, {"2", 2 * time.Second}, {"junk", 0},
		{now.Add(5 * time.Second).Format(http.TimeFormat), 5 * time.Second},
	} {
		if got := RetryAfter(http.Header{"Retry-After": {tc.value}}, now); got != tc.want {
			t.Errorf("Retry-After %q: got %v, want %v", tc.value, got, tc.want)
		}
	}
}

func TestRetryableStatuses(t *testing.T) {
	for status, want := range map[int]bool{
		400: false, 401: false, 402: false, 404: false, 422: false,
		409: true, 500: true, 429: true, 502: true, 503: true, 504: true,
	} {
		if got := retryable(status); got != want {
			t.Errorf("retryable(%d): got %v, want %v", status, got, want)
		}
	}
}

func TestClientBackoffHonoursTheAnswersRetryAfter(t *testing.T) {
	c := New("http://shop", "", nil)
	c.BaseDelay, c.MaxDelay = 10*time.Millisecond, 40*time.Millisecond
	for range 100 {
		if got := c.Backoff(5, nil); got < 0 || got > 40*time.Millisecond {
			t.Fatalf("after a network error: got %v, want within [0, 40ms]", got)
		}
		if got := c.Backoff(0, http.Header{"Retry-After": {"2"}}); got < 2*time.Second || got > 2010*time.Millisecond {
			t.Fatalf("after Retry-After: 2: got %v, want 2s plus at most 10ms", got)
		}
	}
}
