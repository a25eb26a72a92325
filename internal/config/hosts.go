package config

import (
	"fmt"
	"net"
	"strings"
)

// allowedHosts is the Host allow-list: the names addr is reached by, then
// the comma-separated extra names. A loopback or unspecified listen host
// (127.0.0.1, ::1, localhost, 0.0.0.0, ::, none) stands for the loopback
// names, since the public name of a server listening everywhere cannot be
// guessed: it must be given in ALLOWED_HOSTS.
func allowedHosts(addr, extra string) ([]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("ADDR: want host:port such as 127.0.0.1:8080, got %q", addr)
	}
	var hosts []string
	switch host {
	case "", "0.0.0.0", "::", "127.0.0.1", "::1", "localhost":
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			hosts = append(hosts, net.JoinHostPort(h, port))
		}
	default:
		hosts = append(hosts, net.JoinHostPort(host, port))
	}
	for _, h := range strings.Split(extra, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if strings.ContainsAny(h, "/ @") {
			return nil, fmt.Errorf("ALLOWED_HOSTS: want host names such as shop.example.com or shop.example.com:8443, got %q", h)
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}
