package chaos

import (
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// forwarder relays the connections made to an address of the bridge to
// a server of the root namespace that listens elsewhere (a Unix socket,
// 127.0.0.1): PostgreSQL's, the mail server's. It is a relay and no
// fault: a packet dropped on the shop's link is dropped before it gets
// here, and the connection behind stays open as a TCP peer's would, so
// that a backend holds its transaction and locks through a partition as
// it would for a client on another machine.
type forwarder struct {
	ln     net.Listener
	to     string // network and address
	toNet  string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// forward listens on ip:0 and relays each connection to address on
// network.
func forward(ip, network, address string) (*forwarder, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, err
	}
	f := &forwarder{ln: ln, toNet: network, to: address, conns: map[net.Conn]bool{}}
	go f.serve()
	return f, nil
}

func (f *forwarder) addr() string { return f.ln.Addr().String() }

func (f *forwarder) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go f.relay(c)
	}
}

func (f *forwarder) relay(c net.Conn) {
	up, err := net.Dial(f.toNet, f.to)
	if err != nil {
		c.Close()
		return
	}
	if !f.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src) //nolint:errcheck // either side closing ends the relay
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	c.Close()
	up.Close()
	f.mu.Lock()
	delete(f.conns, c)
	delete(f.conns, up)
	f.mu.Unlock()
}

func (f *forwarder) track(cs ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		f.conns[c] = true
	}
	return true
}

func (f *forwarder) close() {
	f.ln.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for c := range f.conns {
		c.Close()
	}
}

// dbTarget is one server a PostgreSQL URL names: a Unix socket or a TCP
// address.
type dbTarget struct{ network, address string }

// dbTargets reads the servers a shop's DATABASE_URL names: localpg's
// socket folder and port (host and port in the query), or a formation's
// multi-host list.
func dbTargets(raw string) ([]dbTarget, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if dir := u.Query().Get("host"); strings.HasPrefix(dir, "/") {
		port := u.Query().Get("port")
		if port == "" {
			port = "5432"
		}
		return []dbTarget{{"unix", dir + "/.s.PGSQL." + port}}, nil
	}
	var ts []dbTarget
	for _, h := range strings.Split(u.Host, ",") {
		ts = append(ts, dbTarget{"tcp", h})
	}
	return ts, nil
}

// netDBURL is raw with its servers replaced by addrs, the forwarders'
// addresses, in order; a Unix socket's host and port leave the query.
func netDBURL(raw string, addrs []string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Del("host")
	q.Del("port")
	u.RawQuery = q.Encode()
	u.Host = strings.Join(addrs, ",")
	return u.String(), nil
}

// hostPort splits addr, for the rules that name a port.
func hostPort(addr string) (string, int) {
	h, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return h, n
}
