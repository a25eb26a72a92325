package app

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"exactlyonce/internal/handlers"
)

// The public server's timeouts. Without them a client that sends its
// headers or its body a byte at a time, or keeps idle connections open,
// holds a goroutine and a socket as long as it likes.
const (
	// readHeaderTimeout bounds the request line and headers.
	readHeaderTimeout = 10 * time.Second
	// readTimeout bounds the whole request, body included: a body that
	// never completes is cut off after it. An order is a few hundred bytes.
	readTimeout = 30 * time.Second
	// idleTimeout closes keep-alive connections nobody uses.
	idleTimeout = 2 * time.Minute
)

// newServer is the public HTTP server for h. Its write timeout, which
// counts from the end of the request headers, leaves room for the whole
// read and the slowest legitimate request (handlers.LongestRequest).
func newServer(h http.Handler, providerTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      readTimeout + handlers.LongestRequest(providerTimeout),
		IdleTimeout:       idleTimeout,
	}
}

// serveUntil serves srv on ln until ctx ends, then lets the requests in
// flight finish for up to grace and closes whatever is left. Running out of
// grace is no error: those requests' clients have waited long enough.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	srv.Close()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
