// Command mailcatcher runs the mail catcher as a process of its own: SMTP
// on one loopback port, the caught mail as JSON (GET /messages) on
// another. make run starts it beside the shop (bench/cmd/runlocal), so
// that the shop's binary links no mail server; the shop's admin listener
// shows what it caught at /mail (MAIL_CATCHER_URL).
//
// Both ports may be :0 (the default): a free one is taken, and -ready names
// a file it then writes, "<smtp address> <listing URL>" on one line, for
// whoever started it to read. It keeps the newest -keep messages in memory
// and stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"exactlyonce/mailcatcher"
)

func main() {
	smtpAddr := flag.String("smtp", "127.0.0.1:0", "where to accept SMTP")
	httpAddr := flag.String("http", "127.0.0.1:0", "where to list the caught mail (GET /messages)")
	keep := flag.Int("keep", 1000, "how many messages to keep, the newest")
	ready := flag.String("ready", "", "a file to write \"<smtp address> <listing URL>\" to once both serve")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *smtpAddr, *httpAddr, *keep, *ready); err != nil {
		fmt.Fprintln(os.Stderr, "mailcatcher:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, smtpAddr, httpAddr string, keep int, ready string) error {
	if keep < 1 {
		return fmt.Errorf("-keep %d: keep at least one message", keep)
	}
	catcher, err := mailcatcher.Listen(smtpAddr)
	if err != nil {
		return err
	}
	defer catcher.Close()
	catcher.SetLimit(keep)

	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return fmt.Errorf("listing: %w", err)
	}
	srv := &http.Server{Handler: catcher.Handler(), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer srv.Close()

	listing := "http://" + ln.Addr().String()
	fmt.Fprintf(os.Stderr, "mailcatcher: SMTP on %s, the caught mail at %s/messages\n", catcher.Addr(), listing)
	if ready != "" {
		// Written whole and then renamed, so that a reader never sees half a line.
		tmp := ready + ".tmp"
		if err := os.WriteFile(tmp, []byte(catcher.Addr()+" "+listing+"\n"), 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, ready); err != nil {
			return err
		}
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("listing: %w", err)
	}
}
