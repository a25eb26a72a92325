package mailcatcher

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"time"
)

// Message is one message as received.
type Message struct {
	From      string
	To        []string
	MessageID string
	Subject   string
	// Body is the text of a single-part message, its transfer encoding
	// undone; empty for others (see Raw).
	Body       string
	Raw        []byte
	ReceivedAt time.Time
}

// Server is a running catcher.
type Server struct {
	ln       net.Listener
	mu       sync.Mutex
	messages []Message
	limit    int // the most messages kept; 0: all (SetLimit)
	wg       sync.WaitGroup
	// Reject, when set, is asked before a message is accepted; a non-nil
	// error answers 451 and the message is dropped (tests of a failing
	// server).
	Reject func() error
}

// Start serves SMTP on ln until Close.
func Start(ln net.Listener) *Server {
	s := &Server{ln: ln}
	s.wg.Add(1)
	go s.accept()
	return s
}

// Listen starts a catcher on addr, such as 127.0.0.1:0.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mail catcher: %w", err)
	}
	return Start(ln), nil
}

// Addr is the address the catcher listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Messages returns the messages received so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Close stops accepting and waits for the connections to end.
func (s *Server) Close() error {
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			s.session(conn)
		}()
	}
}

// session talks SMTP on one connection.
func (s *Server) session(conn net.Conn) {
	conn.SetDeadline(time.Now().Add(time.Minute)) //nolint:errcheck
	r := bufio.NewReader(conn)
	w := bufio.NewWriter(conn)
	reply := func(line string) {
		w.WriteString(line + "\r\n") //nolint:errcheck
		w.Flush()                    //nolint:errcheck
	}
	reply("220 mailcatcher ready")
	var from string
	var to []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			reply("250-mailcatcher")
			reply("250 8BITMIME")
		case "HELO":
			reply("250 mailcatcher")
		case "MAIL":
			from, to = address(arg), nil
			reply("250 OK")
		case "RCPT":
			to = append(to, address(arg))
			reply("250 OK")
		case "DATA":
			reply("354 end with <CRLF>.<CRLF>")
			raw, err := readData(r)
			if err != nil {
				return
			}
			if s.Reject != nil {
				if err := s.Reject(); err != nil {
					reply("451 " + err.Error())
					continue
				}
			}
			s.keep(from, to, raw)
			reply("250 OK queued")
		case "RSET":
			from, to = "", nil
			reply("250 OK")
		case "NOOP":
			reply("250 OK")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 command not implemented")
		}
	}
}

// readData reads a DATA section up to the line holding a single dot,
// undoing the dot-stuffing of lines that begin with one.
func readData(r *bufio.Reader) ([]byte, error) {
	var b bytes.Buffer
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if line == ".\r\n" || line == ".\n" {
			return b.Bytes(), nil
		}
		b.WriteString(strings.TrimPrefix(line, "."))
	}
}

// address takes the path out of "FROM:<a@b> SIZE=…" or "TO:<a@b>".
func address(arg string) string {
	_, rest, _ := strings.Cut(arg, ":")
	rest = strings.TrimSpace(rest)
	if i := strings.Index(rest, ">"); strings.HasPrefix(rest, "<") && i > 0 {
		return rest[1:i]
	}
	return rest
}

func (s *Server) keep(from string, to []string, raw []byte) {
	m := Message{From: from, To: to, Raw: raw, ReceivedAt: time.Now()}
	if parsed, err := mail.ReadMessage(bytes.NewReader(raw)); err == nil {
		m.MessageID = parsed.Header.Get("Message-Id")
		m.Subject, _ = new(mime.WordDecoder).DecodeHeader(parsed.Header.Get("Subject"))
		body := parsed.Body
		if strings.EqualFold(parsed.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			body = quotedprintable.NewReader(body)
		}
		if text, err := io.ReadAll(body); err == nil {
			m.Body = string(text)
		}
	}
	s.mu.Lock()
	s.messages = append(s.messages, m)
	if over := len(s.messages) - s.limit; s.limit > 0 && over > 0 {
		s.messages = append(s.messages[:0:0], s.messages[over:]...)
	}
	s.mu.Unlock()
}

// SetLimit makes the catcher keep only the newest n messages, so that a
// demo left running (or a load test) does not grow without end. Tests and
// the chaos harness, which count every message, leave it unset.
func (s *Server) SetLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = n
}
