package web

import (
	"fmt"
	"testing"
	"time"
)

func TestAddressQuotaStaysBounded(t *testing.T) {
	q := newAddressQuota(CustomerQuota{})
	now := time.Now()
	// Twice the bound, all at once: no bucket has refilled, yet the
	// addresses seen least recently make room for the new ones.
	n := 2 * maxQuotaClients
	addr := func(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255) }
	for i := range n {
		if ok, _ := q.take(addr(i), now); !ok {
			t.Fatalf("address #%d: got refused, want its first customer allowed", i)
		}
		if got := len(q.buckets.clients); got > maxQuotaClients {
			t.Fatalf("after %d addresses: got %d remembered, want at most %d", i+1, got, maxQuotaClients)
		}
	}
	if _, found := q.buckets.clients[addr(n-1)]; !found {
		t.Error("got the last address forgotten, want it remembered")
	}
	if _, found := q.buckets.clients[addr(0)]; found {
		t.Error("got the first address remembered, want it forgotten")
	}
}

func TestAddressQuotaSharesAnIPv6Slash64(t *testing.T) {
	q := newAddressQuota(CustomerQuota{PerMinute: 1, Burst: 2})
	now := time.Now()
	for i, addr := range []string{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9"} {
		if ok, _ := q.take(addr, now); !ok {
			t.Fatalf("take #%d from %s: got refused, want allowed", i+1, addr)
		}
	}
	// A third address of the same /64 finds the shared bucket empty.
	if ok, wait := q.take("2001:db8:1:2:abcd::1", now); ok || wait <= 0 {
		t.Errorf("third address of the /64: got ok=%v, wait %v, want refused with a wait", ok, wait)
	}
	// Another /64 has its own bucket; IPv4 addresses are kept whole.
	for _, addr := range []string{"2001:db8:1:3::1", "192.0.2.1", "192.0.2.2"} {
		if ok, _ := q.take(addr, now); !ok {
			t.Errorf("%s: got refused, want its own bucket", addr)
		}
	}
	if got := len(q.buckets.clients); got != 4 {
		t.Errorf("got %d buckets, want 4", got)
	}
}
