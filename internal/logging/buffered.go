package logging

import (
	"context"
	"io"
	"log/slog"
	"time"

	"go.uber.org/zap/zapcore"
)

// Buffered batches the lines written to w, flushing them every flushEvery
// and whenever 256 KiB are waiting, instead of one write system call per
// line: at thousands of requests a second the access log's writes cost the
// web process a quarter of its CPU per replay (docs/performance.md). A
// logger made by New on it writes warnings and errors through at once, so
// only info and debug lines can wait; a process killed with SIGKILL loses at
// most flushEvery of them. Stop flushes and ends the flushing; call it last.
//
// It is zap's BufferedWriteSyncer, the well-kept implementation of exactly
// this, used under slog as a plain io.Writer.
func Buffered(w io.Writer, flushEvery time.Duration) *zapcore.BufferedWriteSyncer {
	return &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(w), Size: 256 << 10, FlushInterval: flushEvery}
}

// flushingWarnings flushes a buffered output after every line at Warn or
// above, so that what an operator must see is never held back.
type flushingWarnings struct {
	slog.Handler
	out *zapcore.BufferedWriteSyncer
}

func (h flushingWarnings) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if serr := h.out.Sync(); err == nil {
			err = serr
		}
	}
	return err
}

func (h flushingWarnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingWarnings{h.Handler.WithAttrs(attrs), h.out}
}

func (h flushingWarnings) WithGroup(name string) slog.Handler {
	return flushingWarnings{h.Handler.WithGroup(name), h.out}
}
