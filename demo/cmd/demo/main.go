// Command demo is the shop (cmd/web) with the double-click lab mounted
// (demo/lab, through app.Demo): the binary make run serves, for the
// demo's audience. DEMO=1 mounts the lab; DEMO=0 serves the shop alone. The
// shop's own binary links none of the lab.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"exactlyonce/demo/lab"
	"exactlyonce/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Main(ctx, os.Args[1:], &lab.Demo{}); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
