// Package mailcatcher is a small SMTP server that accepts every message and
// keeps it in memory: the tests' real SMTP listener, and the demo's local
// mail catcher when no Mailpit runs. It speaks just enough SMTP (RFC 5321:
// HELO/EHLO, MAIL, RCPT, DATA, RSET, NOOP, QUIT) for a client library to
// deliver to it over a real TCP connection; no TLS, no authentication, no
// relaying. It is not for production.
package mailcatcher
