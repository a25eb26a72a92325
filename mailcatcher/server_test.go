package mailcatcher_test

import (
	"io"
	"net"
	"net/smtp"
	"strings"
	"testing"
	"time"

	"exactlyonce/mailcatcher"
)

// The standard library's SMTP client delivers to the catcher, which keeps
// the envelope and the headers and undoes the dot-stuffing of the body.
func TestCatchesWhatAClientSends(t *testing.T) {
	s, err := mailcatcher.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := "Message-ID: <m1@test>\r\nSubject: hello\r\n\r\nline one\r\n.starts with a dot\r\n"
	if err := smtp.SendMail(s.Addr(), nil, "a@test", []string{"b@test", "c@test"}, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	got := s.Messages()
	if len(got) != 1 {
		t.Fatalf("got %d messages, want 1", len(got))
	}
	m := got[0]
	if m.From != "a@test" || len(m.To) != 2 || m.MessageID != "<m1@test>" || m.Subject != "hello" {
		t.Errorf("got from %q to %v id %q subject %q", m.From, m.To, m.MessageID, m.Subject)
	}
	if want := "line one\r\n.starts with a dot\r\n"; m.Body != want {
		t.Errorf("got body %q, want %q", m.Body, want)
	}
}

func TestKeepsTheNewestWithinItsLimit(t *testing.T) {
	s, err := mailcatcher.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetLimit(2)
	for _, subject := range []string{"one", "two", "three"} {
		msg := "Subject: " + subject + "\r\n\r\nbody\r\n"
		if err := smtp.SendMail(s.Addr(), nil, "a@test", []string{"b@test"}, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Messages()
	if len(got) != 2 || got[0].Subject != "two" || got[1].Subject != "three" {
		t.Errorf("got %d messages %+v, want the newest two", len(got), got)
	}
}

// smtpLines sends lines to the catcher as a raw client and returns what it
// answered until it closed the connection (or 5 s passed).
func smtpLines(t *testing.T, addr string, lines ...string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(conn, l); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(conn)
	return string(got)
}

// A browser can be made to POST to the catcher's port; its request line is
// not SMTP, so the session ends there and the SMTP lines in its body are
// never read (no planted "re-payment" mail).
func TestHTTPThenSMTPPlantsNothing(t *testing.T) {
	s, err := mailcatcher.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := smtpLines(t, s.Addr(), "POST / HTTP/1.1\r\nHost: 127.0.0.1:1025\r\nContent-Type: text/plain\r\n\r\n",
		"HELO x\r\nMAIL FROM:<shop@test>\r\nRCPT TO:<you@test>\r\nDATA\r\nSubject: pay again\r\n\r\nplease\r\n.\r\nQUIT\r\n")
	if !strings.Contains(got, "500 ") || strings.Contains(got, "queued") {
		t.Errorf("got %q, want the session closed at the HTTP request line", got)
	}
	if n := len(s.Messages()); n != 0 {
		t.Errorf("got %d messages, want none", n)
	}
}

// A message over MaxMessageBytes is refused and its session closed, whether
// its lines end or not; what is kept stays under MaxKeptBytes.
func TestMessagesAreBounded(t *testing.T) {
	s, err := mailcatcher.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, body := range map[string]string{
		"many lines": strings.Repeat(strings.Repeat("x", 70)+"\r\n", mailcatcher.MaxMessageBytes/72+10),
		"one line":   strings.Repeat("x", mailcatcher.MaxMessageBytes+10),
	} {
		got := smtpLines(t, s.Addr(), "HELO x\r\nMAIL FROM:<a@test>\r\nRCPT TO:<b@test>\r\nDATA\r\n", body, "\r\n.\r\nQUIT\r\n")
		if !strings.Contains(got, "552 ") {
			t.Errorf("%s: got %q, want 552", name, got[max(0, len(got)-200):])
		}
	}
	if n := len(s.Messages()); n != 0 {
		t.Errorf("got %d messages kept, want none of the oversized ones", n)
	}
	s.SetLimit(1000) // as the demo's catcher is: the bytes bound then applies
	big := strings.Repeat(strings.Repeat("y", 70)+"\r\n", (mailcatcher.MaxMessageBytes-1000)/72)
	for range mailcatcher.MaxKeptBytes/mailcatcher.MaxMessageBytes + 4 {
		if err := smtp.SendMail(s.Addr(), nil, "a@test", []string{"b@test"}, []byte("Subject: big\r\n\r\n"+big)); err != nil {
			t.Fatal(err)
		}
	}
	kept := 0
	for _, m := range s.Messages() {
		kept += len(m.Raw)
	}
	if kept > mailcatcher.MaxKeptBytes || kept == 0 {
		t.Errorf("kept %d bytes, want some and at most %d", kept, mailcatcher.MaxKeptBytes)
	}
}
