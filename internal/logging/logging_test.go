package logging_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"exactlyonce/internal/logging"
)

func TestRedactKey(t *testing.T) {
	for key, want := range map[string]string{
		"8e03978e-40d5-43e8-bc93-6894a57f9324": "8e0397…",
		"abcd":                                 "ab…",
		"k":                                    "…",
	} {
		if got := logging.RedactKey(key); got != want {
			t.Errorf("RedactKey(%q): got %q, want %q", key, got, want)
		}
	}
}

func TestRequestIDFromContext(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(&buf, "text", 0)
	log.InfoContext(logging.WithRequestID(context.Background(), "rid-1"), "hello", logging.Key("abcdefghijklmnop"))
	if got := buf.String(); !strings.Contains(got, "request_id=rid-1") || !strings.Contains(got, "key=abcdef…") {
		t.Errorf("got %q, want the request id and the redacted key", got)
	}
}
