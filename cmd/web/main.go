// Command web serves the shop: the browser checkout and the JSON API, with
// the background completer, sweeper and reconciler, and the outbox's jobs
// unless RUN_JOBS=0. It only wires (app.Main: configuration → tracing →
// pool → migrations → application → serve → graceful shutdown) and links
// no PostgreSQL launcher, payment provider, mail server or demo: those are
// reached at DATABASE_URL, STRIPE_API_BASE and SMTP_ADDR (make run starts
// local ones beside the demo's binary, demo/cmd/demo, which is this shop
// with the double-click lab mounted).
//
// `web sweep` runs one pass of the sweeper and exits, for cron.
//
// `web unpark SCOPE KEY` hands a key the completer parked back to it, once
// an operator has dealt with the cause (docs/operations.md).
//
// `web worker` works the outbox's jobs (loyalty points, confirmation mail)
// and serves nothing; run the web processes with RUN_JOBS=0 then.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"exactlyonce/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Main(ctx, os.Args[1:], nil); err != nil {
		fmt.Fprintln(os.Stderr, "web:", err)
		os.Exit(1)
	}
}
