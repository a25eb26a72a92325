package chaos

import (
	"fmt"
	"net"
	"sync"
)

// smtpProxy stands between the shops and the mail catcher, forwarding TCP
// as it comes, until it is told to stall: then it still accepts
// connections, and (with greet) passes a new connection's greeting, but
// holds every other byte in both directions until it is told to resume.
// That is an SMTP server that accepts and then hangs (a relay with a full
// disk, a stuck content filter), which no refused connection imitates:
// the sender is left waiting on its own timeouts, holding whatever it
// holds meanwhile.
type smtpProxy struct {
	ln       net.Listener
	upstream string

	mu sync.Mutex
	// flowing is closed while bytes flow; a stall replaces it with an
	// open channel, which the last resume closes. Stalls may overlap:
	// stalls counts those in effect.
	flowing chan struct{}
	stalls  int
	greet   bool // while stalled, pass each connection's first reply
	conns   map[net.Conn]struct{}
	closed  bool

	wg sync.WaitGroup
}

// listenSMTPProxy forwards connections to 127.0.0.1:0 to upstream.
func listenSMTPProxy(upstream string) (*smtpProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("smtp proxy: %w", err)
	}
	flowing := make(chan struct{})
	close(flowing)
	p := &smtpProxy{ln: ln, upstream: upstream, flowing: flowing, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is where the shops send mail.
func (p *smtpProxy) Addr() string { return p.ln.Addr().String() }

// stall stops forwarding until the matching resume (and that of every
// other stall in effect). With greet, a connection opened during the stall
// still gets the server's first reply (its 220 greeting), so the sender is
// committed to the conversation before it hangs; the latest stall says.
func (p *smtpProxy) stall(greet bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalls == 0 {
		p.flowing = make(chan struct{})
	}
	p.stalls++
	p.greet = greet
}

// resume ends one stall; once none is in effect, bytes flow again, those
// held first. Bytes held are delivered even if their sender has given up
// meanwhile: a server that took a message's final dot and answered too
// late for its sender, the at-least-once window of the mail consumer
// (the same Message-ID sent again).
func (p *smtpProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalls == 0 {
		return
	}
	p.stalls--
	if p.stalls == 0 {
		close(p.flowing)
	}
}

// resumeAll ends every stall.
func (p *smtpProxy) resumeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalls > 0 {
		p.stalls = 0
		close(p.flowing)
	}
}

// Close stops accepting, cuts every connection and waits for their
// goroutines.
func (p *smtpProxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.resumeAll() // lets the held writes see their connections closed
	p.wg.Wait()
	return err
}

func (p *smtpProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.upstream)
		if err != nil {
			client.Close()
			continue
		}
		if !p.track(client, server) {
			return
		}
		done := make(chan struct{})
		var once sync.Once
		end := func() {
			once.Do(func() {
				close(done)
				client.Close()
				server.Close()
				p.untrack(client, server)
			})
		}
		p.wg.Add(2)
		go func() { defer p.wg.Done(); defer end(); p.pipe(server, client, false, done) }()
		go func() { defer p.wg.Done(); defer end(); p.pipe(client, server, true, done) }()
	}
}

// track notes a connection pair for Close, or closes it when Close has
// begun.
func (p *smtpProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *smtpProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

// pipe copies src to dst, each chunk only while bytes flow (see wait).
// fromServer says the chunks are the server's, whose first is the
// greeting. It returns when either side ends or done is closed.
func (p *smtpProxy) pipe(dst, src net.Conn, fromServer bool, done <-chan struct{}) {
	buf := make([]byte, 32<<10)
	first := fromServer
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait(first, done) {
				return
			}
			first = false
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			// EOF, a reset or a closed connection: either way the
			// conversation is over, and end closes the other side too.
			return
		}
	}
}

// wait blocks while the proxy stalls, unless greeting is the server's first
// chunk and the stall passes greetings. It reports false when the
// connection ended meanwhile.
func (p *smtpProxy) wait(greeting bool, done <-chan struct{}) bool {
	p.mu.Lock()
	flowing, greet := p.flowing, p.greet
	p.mu.Unlock()
	select {
	case <-flowing:
		return true
	default:
	}
	if greeting && greet {
		return true
	}
	select {
	case <-flowing:
		return true
	case <-done:
		return false
	}
}
