package logging

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to read while the flusher writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBufferedHoldsInfoButNotWarnings shows the buffered log's rule: info
// lines wait for the next flush, a warning goes out at once and takes the
// lines before it along, and Stop writes whatever is left.
func TestBufferedHoldsInfoButNotWarnings(t *testing.T) {
	var sink lockedBuffer
	out := Buffered(&sink, time.Hour) // no timed flush within the test
	log := New(out, "text", 0)

	log.Info("request", "path", "/api/orders")
	if got := sink.String(); got != "" {
		t.Fatalf("an info line was written at once: %q", got)
	}
	log.Warn("lock lost")
	got := sink.String()
	if !strings.Contains(got, "request") || !strings.Contains(got, "lock lost") {
		t.Fatalf("after a warning: got %q, want both lines", got)
	}
	log.With("component", "sweeper").Error("sweep failed")
	if !strings.Contains(sink.String(), "sweep failed") {
		t.Fatal("an error of a derived logger was held back")
	}
	log.Info("last")
	if err := out.Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sink.String(), "last") {
		t.Fatal("Stop did not write the lines left")
	}
}

// TestBufferedFlushesOnItsOwn shows that an info line does not wait for a
// warning: the timer writes it.
func TestBufferedFlushesOnItsOwn(t *testing.T) {
	var sink lockedBuffer
	out := Buffered(&sink, 10*time.Millisecond)
	defer out.Stop()
	New(out, "json", 0).Info("request")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(sink.String(), "request") {
		if time.Now().After(deadline) {
			t.Fatal("the info line was not flushed within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
