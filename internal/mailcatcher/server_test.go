package mailcatcher_test

import (
	"net/smtp"
	"testing"

	"exactlyonce/internal/mailcatcher"
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
