// Package logging builds the application's structured logger and the few
// attributes every part of it logs the same way: the request id and the
// trace and span ids, carried in the context so that the checkout engine's
// lines name the request and the trace that caused them, and idempotency
// keys, which are redacted to a short prefix.
//
// What never reaches a log line: bearer tokens, lock tokens, card numbers and
// whole idempotency keys (a key is the client's, and may carry meaning).
package logging

import (
	"fmt"
	"io"
	"log/slog"

	"go.uber.org/zap/zapcore"
)

// New returns a logger writing to w as JSON (format "json", for production)
// or as text, at level and above, that adds the context's request id and
// trace and span ids to every line logged with a context. On an output made
// by Buffered, it flushes after every warning and error.
func New(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: readableDuration}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	if out, ok := w.(*zapcore.BufferedWriteSyncer); ok {
		h = flushingWarnings{h, out}
	}
	return slog.New(contextHandler{h})
}

// readableDuration writes durations as "30s" rather than the nanoseconds
// JSON would otherwise show.
func readableDuration(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// ParseLevel reads debug, info, warn or error.
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("want debug, info, warn or error, got %q", s)
	}
	return l, nil
}

// keyPrefix is how many characters of a key a log line shows: enough to tell
// keys apart when reading logs, too few to replay one.
const keyPrefix = 6

// RedactKey shortens an idempotency key to at most its first six characters
// (fewer for short keys, so that no key is shown whole) followed by "…".
func RedactKey(key string) string {
	n := min(keyPrefix, len(key)/2)
	return key[:n] + "…"
}

// Key is the log attribute for an idempotency key, redacted.
func Key(key string) slog.Attr {
	return slog.String("key", RedactKey(key))
}
