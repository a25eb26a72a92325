package loadtest

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestFloorAnswersAsAReplay checks that the floor answers the shop's replay
// request as the shop does (201, Idempotent-Replayed, a receipt), so the
// leg that loads it does the same work on the client's side.
func TestFloorAnswersAsAReplay(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeFloor(ctx, ln, nil) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	shop, err := NewShop("http://"+ln.Addr().String(), 1)
	if err != nil {
		t.Fatal(err)
	}
	shop.tokens, shop.replayKey, shop.sku = []string{"t"}, []string{"k"}, "mug"
	replay, err := shop.ReplayAt("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := replay(ctx, 0); err != nil {
		t.Fatalf("replay at the floor: %v", err)
	}
	resp, err := http.Post("http://"+ln.Addr().String()+"/api/orders", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // drained for the status only
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("without a key: got %d, want 400", resp.StatusCode)
	}
	if _, err := shop.ReplayAt("http://192.0.2.1:80"); err == nil {
		t.Error("ReplayAt accepted an address that is not loopback")
	}
}
