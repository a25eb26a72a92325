package main

import (
	"net"
	"net/smtp"
	"strings"
	"testing"
	"time"
)

// make run's mail catcher needs no fixed port: with MAIL_CATCHER=auto (make
// run's default) it listens on a free loopback port, even while something
// else holds 1025, and the confirmations go to it when SMTP_ADDR is not
// set; an SMTP_ADDR that is set is kept.
func TestMailCatcherNeedsNoFixedPort(t *testing.T) {
	// Whatever holds the usual port (another shop, Mailpit) stays there.
	if held, err := net.Listen("tcp", "127.0.0.1:1025"); err == nil {
		defer held.Close()
	}
	catcher, smtpAddr, err := startMailCatcher("auto", "")
	if err != nil {
		t.Fatalf("MAIL_CATCHER=auto with 1025 taken: %v", err)
	}
	defer catcher.Close()
	if smtpAddr != catcher.Addr() || strings.HasSuffix(smtpAddr, ":1025") {
		t.Fatalf("got mail sent to %q and the catcher on %q, want the catcher's own free port", smtpAddr, catcher.Addr())
	}
	msg := "Subject: hello\r\n\r\nbody\r\n"
	if err := smtp.SendMail(smtpAddr, nil, "shop@exactlyonce.test", []string{"a@example.test"}, []byte(msg)); err != nil {
		t.Fatalf("send to the catcher: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(catcher.Messages()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(catcher.Messages()); n != 1 {
		t.Fatalf("got %d messages caught, want 1", n)
	}

	kept, smtpAddr, err := startMailCatcher("auto", "mail.example:25")
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	if smtpAddr != "mail.example:25" {
		t.Errorf("with SMTP_ADDR set: got mail sent to %q, want mail.example:25", smtpAddr)
	}
}
