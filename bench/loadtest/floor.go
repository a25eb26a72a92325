package loadtest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// The floor is what any Go HTTP server pays for a replay on this machine:
// net/http reading the same request and writing a replay's headers and a
// receipt-sized body, with no router, middleware, log line, decoding or
// key lookup. The load test runs it as a process of its own (ServeFloor)
// and loads it exactly as it loads the shop's replays, so that the shop's
// CPU per replay can be read against it.

// floorReceipt is about the size of a replayed receipt.
var floorReceipt = []byte(`{"order_id":"00000000-0000-4000-8000-000000000000","charge_id":"ch_0000000000000000",` +
	`"amount":1200,"currency":"eur","status":"paid","items":[{"sku":"mug-espresso","name":"Espresso mug",` +
	`"quantity":1,"unit_price":1200,"line_total":1200}]}`)

// ServeFloor serves h on ln until ctx ends: the replay floor when h is
// nil, else the order floor (OrderFloor).
func ServeFloor(ctx context.Context, ln net.Listener, h http.Handler) error {
	if h == nil {
		h = http.HandlerFunc(floor)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: h}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func floor(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, r.Body); err != nil || r.Header.Get("Idempotency-Key") == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Location", "/api/orders/00000000-0000-4000-8000-000000000000")
	h.Set("Idempotent-Replayed", "true")
	w.WriteHeader(http.StatusCreated)
	w.Write(floorReceipt)
}

// ReplayAt sends worker w's replay, the very request Replay sends the shop,
// to another server at base (the floor), and checks the same answer.
func (s *Shop) ReplayAt(base string) (func(ctx context.Context, w int) error, error) {
	base, err := loopback(base)
	if err != nil {
		return nil, err
	}
	other := *s
	other.base = base
	return other.Replay, nil
}
