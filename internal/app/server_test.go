package app

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"exactlyonce/internal/handlers"
	"exactlyonce/internal/pgtest"
)

func TestServerTimeouts(t *testing.T) {
	const providerTimeout = 10 * time.Second
	srv := newServer(http.NotFoundHandler(), providerTimeout)
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.ReadTimeout > 30*time.Second {
		t.Errorf("got read timeouts %s (headers) and %s, want both set and the whole read cut within 30s",
			srv.ReadHeaderTimeout, srv.ReadTimeout)
	}
	if srv.IdleTimeout <= 0 {
		t.Error("got no idle timeout, want idle keep-alive connections closed")
	}
	// The write timeout counts from the end of the headers, so it must
	// cover the read and the slowest legitimate request after it.
	if min := srv.ReadTimeout + handlers.LongestRequest(providerTimeout); srv.WriteTimeout < min {
		t.Errorf("got write timeout %s, want at least %s", srv.WriteTimeout, min)
	}
}

// A body that never completes is cut off by the read timeout: the handler's
// read fails and the connection is closed. The test shortens the timeout;
// TestServerTimeouts checks the real one.
func TestUnfinishedBodyIsCutOff(t *testing.T) {
	t.Parallel()
	readErr := make(chan error, 1)
	srv := newServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
	}), time.Second)
	srv.ReadTimeout = 200 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at the cleanup
	t.Cleanup(func() { srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Promise 100 bytes, send 2, then nothing.
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("got the body read whole, want it cut off")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the body read was not cut off")
	}
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := bufio.NewReader(conn).ReadString(0); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Errorf("got %v reading the connection, want it closed by the server", err)
	}
}

// A client too slow to send its body, cut off by the read timeout, is told
// 408 (its fault, not the server's) and logged as a warning, not an error:
// a slow body is not a 500. The order's key was never claimed.
func TestSlowBodyIs408(t *testing.T) {
	t.Parallel()
	addr, logs := serveWithReadTimeout(t)
	for _, path := range []string{"/api/customers", "/api/orders"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// Promise 100 bytes, send 2, then nothing.
		req := "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n" +
			"Authorization: Bearer tok_nobody\r\nIdempotency-Key: \"k\"\r\n\r\n{}"
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		conn.Close()
		if err != nil {
			t.Fatalf("%s: read the answer: %v", path, err)
		}
		resp.Body.Close()
		if path == "/api/customers" && resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("%s: got %d, want 408", path, resp.StatusCode)
		}
		if resp.StatusCode >= 500 {
			t.Errorf("%s: got %d, want no 5xx for a slow client", path, resp.StatusCode)
		}
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("a slow body was logged as an error:\n%s", logs.String())
	}
}

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
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

// serveWithReadTimeout serves a shop on 127.0.0.1 with a 300 ms read
// timeout, so that a body a client stops sending is cut off quickly, and
// returns its address and the log it writes (JSON lines).
func serveWithReadTimeout(t *testing.T) (string, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	a := New(pgtest.NewPool(t), Config{LockTimeout: 30 * time.Second, ProviderTimeout: 5 * time.Second, Log: log,
		AllowedHosts: []string{"x"}})
	srv := newServer(a.Echo, time.Second)
	srv.ReadTimeout = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at the cleanup
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), logs
}
