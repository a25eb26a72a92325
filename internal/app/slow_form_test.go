package app

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A form whose body stalls, cut off by the read timeout, is the client's
// slowness as a JSON body's is: 408 with a page that says so, logged as a
// warning, never a 400 "form incomplete" (the body was not incomplete on
// purpose) and never an error in the log.
func TestStalledFormBodyIs408(t *testing.T) {
	t.Parallel()
	addr, logs := serveWithReadTimeout(t)
	for _, path := range []string{"/cart", "/pickup"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// Promise 100 bytes, send 9, then nothing.
		req := "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nsku=mug-e"
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: read the answer: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != http.StatusRequestTimeout || len(body) < 100 {
			t.Errorf("%s: got %d with %d bytes %q, want 408 with a page", path, resp.StatusCode, len(body), body)
		}
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("a stalled form was logged as an error:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `"level":"WARN"`) {
		t.Errorf("a stalled form was not logged as a warning:\n%s", logs.String())
	}
}
