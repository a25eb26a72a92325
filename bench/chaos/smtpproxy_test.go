package chaos

import (
	"bufio"
	"errors"
	"net"
	"net/smtp"
	"os"
	"strings"
	"testing"
	"time"

	"exactlyonce/mailcatcher"
)

// startProxy runs the proxy in front of a real mail catcher.
func startProxy(t *testing.T) (*smtpProxy, *mailcatcher.Server) {
	t.Helper()
	catcher, err := mailcatcher.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { catcher.Close() })
	p, err := listenSMTPProxy(catcher.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, catcher
}

// readLine reads one reply line within d, or says it timed out.
func readLine(t *testing.T, conn net.Conn, r *bufio.Reader, d time.Duration) (string, bool) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(d))
	line, err := r.ReadString('\n')
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return "", false
	}
	if err != nil {
		t.Fatalf("read reply: %v", err)
	}
	return line, true
}

func dial(t *testing.T, p *smtpProxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

func TestSMTPProxyForwardsMail(t *testing.T) {
	t.Parallel()
	p, catcher := startProxy(t)
	msg := "Message-ID: <a@chaos.test>\r\nSubject: hi\r\n\r\nbody\r\n"
	if err := smtp.SendMail(p.Addr(), nil, "shop@chaos.test", []string{"c@chaos.test"}, []byte(msg)); err != nil {
		t.Fatalf("send through the proxy: %v", err)
	}
	if got := len(catcher.Messages()); got != 1 {
		t.Fatalf("got %d messages at the catcher, want 1", got)
	}
}

// TestSMTPProxyStallPassesTheGreetingThenHolds: during a stall with greet,
// a new connection gets its 220 and then no answer to EHLO until resume,
// when the held command goes through and is answered.
func TestSMTPProxyStallPassesTheGreetingThenHolds(t *testing.T) {
	t.Parallel()
	p, _ := startProxy(t)
	p.stall(true)
	conn, r := dial(t, p)
	if line, ok := readLine(t, conn, r, 5*time.Second); !ok || !strings.HasPrefix(line, "220") {
		t.Fatalf("got greeting %q (arrived %v), want 220 during a stall that passes greetings", line, ok)
	}
	if _, err := conn.Write([]byte("EHLO chaos\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, ok := readLine(t, conn, r, 300*time.Millisecond); ok {
		t.Fatalf("got %q during the stall, want no reply", line)
	}
	p.resume()
	if line, ok := readLine(t, conn, r, 5*time.Second); !ok || !strings.HasPrefix(line, "250") {
		t.Fatalf("got %q (arrived %v) after resume, want the held EHLO's 250", line, ok)
	}
}

// TestSMTPProxyStallHoldsTheGreeting: without greet, a connection is
// accepted and hears nothing until resume.
func TestSMTPProxyStallHoldsTheGreeting(t *testing.T) {
	t.Parallel()
	p, _ := startProxy(t)
	p.stall(false)
	conn, r := dial(t, p)
	if line, ok := readLine(t, conn, r, 300*time.Millisecond); ok {
		t.Fatalf("got %q during the stall, want no greeting", line)
	}
	p.resume()
	if line, ok := readLine(t, conn, r, 5*time.Second); !ok || !strings.HasPrefix(line, "220") {
		t.Fatalf("got %q (arrived %v) after resume, want the held 220", line, ok)
	}
}

// TestSMTPProxyStallsConversationsInProgress: a connection that was talking
// before the stall hangs mid-conversation, and a sender that gives up
// leaves nothing behind: Close returns.
func TestSMTPProxyStallsConversationsInProgress(t *testing.T) {
	t.Parallel()
	p, catcher := startProxy(t)
	conn, r := dial(t, p)
	if _, ok := readLine(t, conn, r, 5*time.Second); !ok {
		t.Fatal("no greeting before the stall")
	}
	p.stall(true)
	if _, err := conn.Write([]byte("HELO chaos\r\n")); err != nil {
		t.Fatal(err)
	}
	if line, ok := readLine(t, conn, r, 300*time.Millisecond); ok {
		t.Fatalf("got %q during the stall, want no reply", line)
	}
	conn.Close() // the sender's timeout

	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return while stalled with a connection given up")
	}
	if got := len(catcher.Messages()); got != 0 {
		t.Errorf("got %d messages, want none", got)
	}
}

// TestSMTPProxyOverlappingStalls: stalls may overlap; bytes flow again only
// when the last of them is over.
func TestSMTPProxyOverlappingStalls(t *testing.T) {
	t.Parallel()
	p, _ := startProxy(t)
	p.stall(false)
	p.stall(false)
	conn, r := dial(t, p)
	p.resume()
	if line, ok := readLine(t, conn, r, 300*time.Millisecond); ok {
		t.Fatalf("got %q with one of two stalls over, want nothing", line)
	}
	p.resume()
	if line, ok := readLine(t, conn, r, 5*time.Second); !ok || !strings.HasPrefix(line, "220") {
		t.Fatalf("got %q (arrived %v) with both stalls over, want the 220", line, ok)
	}
	p.resume() // one too many: no harm
}
