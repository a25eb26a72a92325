package config

import (
	"fmt"
	"strings"

	"exactlyonce/internal/hosts"
)

// allowedHosts is the Host allow-list: the names addr is reached by
// (hosts.OfAddress), then the comma-separated extra names.
func allowedHosts(addr, extra string) ([]string, error) {
	names, err := hosts.OfAddress(addr)
	if err != nil {
		return nil, fmt.Errorf("ADDR: want host:port such as 127.0.0.1:8080, got %q", addr)
	}
	list := names
	for _, h := range strings.Split(extra, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if strings.ContainsAny(h, "/ @") {
			return nil, fmt.Errorf("ALLOWED_HOSTS: want host names such as shop.example.com or shop.example.com:8443, got %q", h)
		}
		list = append(list, h)
	}
	return list, nil
}
