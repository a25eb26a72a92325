package mail

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// SMTP sends messages to one SMTP server, without authentication or TLS:
// a relay on the shop's own network, or the local mail catcher of make run.
type SMTP struct {
	host    string
	port    int
	timeout time.Duration
}

// NewSMTP returns a sender to addr (host:port).
func NewSMTP(addr string, timeout time.Duration) (*SMTP, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("smtp address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, fmt.Errorf("smtp address %q: bad port", addr)
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &SMTP{host: host, port: port, timeout: timeout}, nil
}

// Send delivers msg, returning once the server has accepted it.
func (s *SMTP) Send(ctx context.Context, msg *gomail.Msg) error {
	c, err := gomail.NewClient(s.host, gomail.WithPort(s.port), gomail.WithTLSPolicy(gomail.NoTLS),
		gomail.WithTimeout(s.timeout))
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp send: %w", err)
	}
	return nil
}
