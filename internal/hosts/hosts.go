// Package hosts holds the Host allow-list, the defence against DNS
// rebinding shared by the shop's listener and the admin listener: a page on
// any domain can rebind its name to the server's address, and its requests
// are then same-origin to the browser and pass every origin check, so the
// only tell is the Host header, which names the attacker's domain.
package hosts

import (
	"net"
	"strings"
)

// AllowList is a set of names a server answers for.
type AllowList struct {
	exact   map[string]bool // host:port, matched as is
	anyPort map[string]bool // host, matched on any port
}

// New returns the allow-list of names: a name with a port
// ("shop.example:8443") must match exactly, one without ("shop.example")
// matches on any port. Case and a trailing dot do not count.
func New(names []string) AllowList {
	a := AllowList{exact: map[string]bool{}, anyPort: map[string]bool{}}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if _, _, err := net.SplitHostPort(n); err == nil {
			a.exact[n] = true
		} else if n != "" {
			a.anyPort[strings.TrimSuffix(n, ".")] = true
		}
	}
	return a
}

// Allows reports whether a request's Host header names this server.
func (a AllowList) Allows(host string) bool {
	host = strings.ToLower(host)
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.Trim(name, "[]"), ".")
	return a.exact[host] || a.anyPort[name] || a.anyPort["["+name+"]"]
}

// OfAddress returns the names a server listening on addr (host:port) is
// reached by: its own, or, for a loopback or unspecified host (127.0.0.1,
// ::1, localhost, 0.0.0.0, ::, none), the loopback names, since the public
// name of a server listening everywhere cannot be guessed (it is
// configured: ALLOWED_HOSTS).
func OfAddress(addr string) ([]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	switch host {
	case "", "0.0.0.0", "::", "127.0.0.1", "::1", "localhost":
		var names []string
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			names = append(names, net.JoinHostPort(h, port))
		}
		return names, nil
	}
	return []string{net.JoinHostPort(host, port)}, nil
}
