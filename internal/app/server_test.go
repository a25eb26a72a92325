package app

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"exactlyonce/internal/handlers"
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
	go srv.Serve(ln)
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
