package web

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ReachableURL is where the browser that sent r reaches the listener whose
// URL is base: base, unless its host is unspecified (a listener on every
// address, as ADDR=:8080 gives http://[::]:8080, no address a browser
// opens), then the host the browser reached r's listener by, with base's
// port; without a trailing slash. The error is base's, when it does not
// parse.
func ReachableURL(base string, r *http.Request) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		host := r.Host
		if h, _, err := net.SplitHostPort(r.Host); err == nil {
			host = h
		}
		u.Host = net.JoinHostPort(strings.Trim(host, "[]"), u.Port())
	}
	return strings.TrimRight(u.String(), "/"), nil
}
