package mailcatcher

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strconv"
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

// The catcher's bounds: it keeps mail in the memory of the process it runs
// in (the demo's shop), so no client may make it grow without end.
const (
	// MaxMessageBytes is the largest message accepted; a larger one is
	// refused (552) and its session closed. A confirmation is a few KB.
	MaxMessageBytes = 1 << 20
	// MaxKeptBytes is the most the kept messages may hold together in a
	// catcher given limits (SetLimit), as the demo's is; the oldest go
	// first.
	MaxKeptBytes = 16 << 20
	// maxLineBytes bounds a command line (SMTP's own limit is 1,000).
	maxLineBytes = 1000
)

// Server is a running catcher.
type Server struct {
	ln       net.Listener
	mu       sync.Mutex
	messages []Message
	kept     int // bytes of Raw in messages
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

// session talks SMTP on one connection. The first line that is not an SMTP
// command ends it: a browser can be made to send an HTTP request to this
// port, whose body could otherwise be read as SMTP commands and plant a
// message (a cross-protocol attack); an HTTP request line is never SMTP.
func (s *Server) session(conn net.Conn) {
	conn.SetDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReaderSize(conn, maxLineBytes+2)
	w := bufio.NewWriter(conn)
	reply := func(line string) {
		w.WriteString(line + "\r\n") //nolint:errcheck // Flush returns it
		w.Flush()                    // a dead connection fails the next read
	}
	reply("220 mailcatcher ready")
	var from string
	var to []string
	for {
		line, err := readLine(r)
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			reply("250-mailcatcher")
			reply("250-SIZE " + strconv.Itoa(MaxMessageBytes))
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
			if errors.Is(err, errTooLarge) {
				reply("552 message larger than " + strconv.Itoa(MaxMessageBytes) + " bytes; closing")
				return
			}
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
			reply("500 not an SMTP command; closing")
			return
		}
	}
}

var errTooLarge = errors.New("message too large")

// readLine reads one line, without its line ending, of at most maxLineBytes.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return "", err // a line too long is bufio.ErrBufferFull: the session ends
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

// readData reads a DATA section up to the line holding a single dot,
// undoing the dot-stuffing of lines that begin with one, and gives up with
// errTooLarge past MaxMessageBytes. It reads in slices of the reader's
// buffer, so that a line without an end cannot grow past the bound either.
func readData(r *bufio.Reader) ([]byte, error) {
	var b bytes.Buffer
	lineStart := true
	for {
		chunk, err := r.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		if lineStart && (string(chunk) == ".\r\n" || string(chunk) == ".\n") {
			return b.Bytes(), nil
		}
		if lineStart {
			chunk = bytes.TrimPrefix(chunk, []byte("."))
		}
		b.Write(chunk)
		if b.Len() > MaxMessageBytes {
			return nil, errTooLarge
		}
		lineStart = err == nil // a full buffer is the middle of a line
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
	s.kept += len(raw)
	drop := 0
	for kept := s.kept; s.limit > 0 && drop < len(s.messages)-1 && (len(s.messages)-drop > s.limit || kept > MaxKeptBytes); drop++ {
		kept -= len(s.messages[drop].Raw)
	}
	if drop > 0 {
		for _, old := range s.messages[:drop] {
			s.kept -= len(old.Raw)
		}
		s.messages = append(s.messages[:0:0], s.messages[drop:]...)
	}
	s.mu.Unlock()
}

// SetLimit makes the catcher keep only the newest n messages, and no more
// than MaxKeptBytes of them, so that a demo left running (or a load test,
// or a client sending big messages) does not grow the process without end.
// Tests and the chaos harness, which count every message, leave it unset.
func (s *Server) SetLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = n
}
