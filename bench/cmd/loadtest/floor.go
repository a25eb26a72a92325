package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/bench/loadtest"
	"exactlyonce/mailcatcher"
)

// serveFloor is -serve-floor: the replay floor, or with -floor-db the
// order floor (loadtest.OrderFloor), until ctx ends.
func serveFloor(ctx context.Context, f flags) error {
	ln, err := net.Listen("tcp", f.floor)
	if err != nil {
		return err
	}
	if f.floorDB == "" {
		return loadtest.ServeFloor(ctx, ln, nil)
	}
	// pgxpool's default size, as the shop's (DB_MAX_CONNS unset), and
	// the shop's provider transport's idle connections (internal/payment).
	db, err := pgxpool.New(ctx, f.floorDB)
	if err != nil {
		return err
	}
	defer db.Close()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 64
	return loadtest.ServeFloor(ctx, ln, &loadtest.OrderFloor{DB: db, Provider: f.floorProvider, SMTP: f.floorSMTP,
		Client: &http.Client{Transport: transport, Timeout: 30 * time.Second}})
}

// startFloor runs this very program with -serve-floor on a free loopback
// port, and args, a process of its own whose CPU is measured as the
// shop's is.
func startFloor(ctx context.Context, dir, name string, args ...string) (*webProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	w, err := spawn(exec.CommandContext(ctx, self, append([]string{"-serve-floor", addr}, args...)...), filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	w.base = "http://" + addr
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return w, nil
		}
		if time.Now().After(deadline) {
			w.stop()
			return nil, errors.New("the floor server did not listen within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// measureOrderFloor runs the order floor leg: a stand-in for the provider
// (the replay floor), a mail catcher in this process, and the order floor
// making statements round trips to dbURL per order, loaded as the shop's
// new orders are.
func measureOrderFloor(ctx context.Context, f flags, dir, dbURL string, shop *loadtest.Shop, statements int, opts loadtest.Options) (loadtest.Result, error) {
	provider, err := startFloor(ctx, dir, "floor-provider")
	if err != nil {
		return loadtest.Result{}, err
	}
	defer provider.stop()
	catcher, err := mailcatcher.Listen("127.0.0.1:0")
	if err != nil {
		return loadtest.Result{}, err
	}
	defer catcher.Close()
	catcher.SetLimit(100) // delivered, not kept
	w, err := startFloor(ctx, dir, "floor-order", "-floor-db", dbURL, "-floor-provider", provider.base, "-floor-smtp", catcher.Addr())
	if err != nil {
		return loadtest.Result{}, err
	}
	defer w.stop()
	do, err := shop.OrderFloorAt(w.base, statements)
	if err != nil {
		return loadtest.Result{}, err
	}
	name := fmt.Sprintf("floor: an order's exchanges alone, bare Go (%d round trips to PostgreSQL, create and confirm, the webhook, the mail)", statements)
	return w.measure(ctx, f, "", func() loadtest.Result { return loadtest.Run(ctx, name, opts, do) })
}
