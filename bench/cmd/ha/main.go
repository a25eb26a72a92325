// Command ha runs a highly available PostgreSQL on this machine for the
// shop to be pointed at (`make ha`): a pg_auto_failover formation of a
// monitor and two synchronous data nodes on loopback ports, or three with
// -standbys 2 (bench/hapg), kept in .data/ha and reused when started
// again. It
// prints the multi-host DATABASE_URL, then each change of the monitor's
// view of the nodes, so that failovers can be watched, until Ctrl-C; then
// it stops the formation and keeps its data.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"exactlyonce/bench/hapg"
	"exactlyonce/localpg"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ha:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", ".data/ha", "the formation's folder (a folder under /tmp instead if user postgres cannot reach it)")
	sync := flag.Bool("sync", true, "synchronous replication (false: asynchronous, which can lose acknowledged commits on a failover)")
	fast := flag.Bool("fast", true, "detect a failed primary in about 3 s (false: pg_auto_failover's defaults, about a minute)")
	standbys := flag.Int("standbys", 1, "standbys of the primary: 1, or 2 (synchronous, number_sync_standbys 1: one standby lost leaves the other confirming commits)")
	flag.Parse()

	// Caught before the start, so that Ctrl-C during it still stops what
	// has started.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	usable, fellBack, err := localpg.UsableDataDir(*dir)
	if err != nil {
		return err
	}
	if fellBack {
		fmt.Fprintf(os.Stderr, "ha: user postgres cannot reach %s; using %s\n", *dir, usable)
	}
	f, err := hapg.Start(ctx, hapg.Options{Dir: usable, Sync: *sync, Fast: *fast, Standbys: *standbys, Log: os.Stderr})
	if err != nil {
		return err
	}
	url := f.URL("postgres")
	fmt.Printf(`
DATABASE_URL=%s

Point the shop at it (it connects to whichever node is primary):
  DATABASE_URL='%s' make run
Nodes: %s; monitor :%d (%s)
Logs: %s/*.log. Ctrl-C stops the formation and keeps its data.

`, url, url, nodeList(f), f.Monitor().Port(), f.MonitorURL(), usable)

	f.Follow(ctx, os.Stdout)

	fmt.Fprintln(os.Stderr, "ha: stopping the formation")
	stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return f.Stop(stopCtx)
}

// nodeList names the data nodes and their ports.
func nodeList(f *hapg.Formation) string {
	var parts []string
	for _, n := range f.Nodes() {
		parts = append(parts, fmt.Sprintf("%s :%d", n.Name(), n.Port()))
	}
	return strings.Join(parts, ", ")
}
