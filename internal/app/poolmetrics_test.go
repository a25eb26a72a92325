package app_test

import (
	"net/http"
	"strings"
	"testing"

	"exactlyonce/internal/apptest"
)

// TestPoolMetrics: the pool's statistics are on /metrics, so its size can
// be judged from how often requests wait for a connection.
func TestPoolMetrics(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "pool-metrics", `{"items":[{"sku":"mug-espresso","quantity":1}]}`); r.Status != http.StatusCreated {
		t.Fatalf("order: got %d", r.Status)
	}
	if n := h.Metric(t, "exactlyonce_db_pool_max_conns"); n < 1 {
		t.Errorf("exactlyonce_db_pool_max_conns = %v, want at least 1", n)
	}
	if n := h.Metric(t, "exactlyonce_db_pool_acquires_total"); n < 2 {
		t.Errorf("exactlyonce_db_pool_acquires_total = %v after an order, want at least 2", n)
	}
	for _, name := range []string{"exactlyonce_db_pool_empty_acquires_total", "exactlyonce_db_pool_acquire_wait_seconds_total",
		"exactlyonce_db_pool_conns", "exactlyonce_db_pool_idle_conns", "exactlyonce_db_pool_acquired_conns", "exactlyonce_db_pool_new_conns_total"} {
		if body := string(h.Admin(t, "/metrics").Body); !strings.Contains(body, "\n"+name+" ") {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}
