package app_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"testing"

	"exactlyonce/internal/apptest"
)

// The admin listener serves River UI, whose API lists the jobs a new order
// enqueued: the operators' view of the outbox.
func TestAdminServesRiverUI(t *testing.T) {
	t.Parallel()
	h := apptest.New(t)
	c := h.NewCustomer(t)
	if r := h.PlaceOrder(t, c, "k", oneMug); r.Status != http.StatusCreated {
		t.Fatalf("place order: got %d %s", r.Status, r.Body)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.App.ServeAdmin(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("admin server: %v", err)
		}
	})
	base := "http://" + ln.Addr().String()
	resp, err := http.Get(base + "/riverui/api/jobs?state=available&limit=10")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var jobs struct {
		Data []struct {
			Kind  string `json:"kind"`
			State string `json:"state"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&jobs); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET jobs: got %d, %v", resp.StatusCode, err)
	}
	if len(jobs.Data) != 2 {
		t.Errorf("got %d available jobs in River UI, want 2 (%+v)", len(jobs.Data), jobs.Data)
	}
	page, err := http.Get(base + "/riverui/")
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		t.Errorf("GET /riverui/: got %d, want 200", page.StatusCode)
	}
}
