package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"exactlyonce/localpg"
)

// startFake starts the fake Stripe (-fake) as a process of its own, its
// state in memory (-fake-store=memory, the default) or on a database of
// its own on the load test's server (postgres), sending its webhooks to
// webhookURL; it returns the process and the secret key (also the webhook
// secret) the shop must use. Apart, its CPU is measured on its own
// (Result.ProviderCPU); with the memory store PostgreSQL does none of its
// work either, as it does none of Stripe's.
func startFake(ctx context.Context, f flags, dir, direct, webhookURL string) (*webProc, string, error) {
	env := []string{"FAKE_PROVIDER_STORE=" + f.fakeStore}
	if f.fakeStore == "postgres" {
		fakeURL, err := localpg.OwnDatabase(ctx, direct, "fakestripe")
		if err != nil {
			return nil, "", err
		}
		env = append(env, "DATABASE_URL="+fakeURL)
	}
	secret := "sk_test_" + strings.ToLower(rand.Text())
	// A port of the fake's own choosing, written to READY_FILE once it
	// serves: no free port picked here that another process could take
	// before the fake binds it.
	ready := filepath.Join(dir, "fakestripe.url")
	_ = os.Remove(ready)
	cmd := exec.Command(f.fake)
	// After os.Environ: os/exec keeps the last of a duplicated variable,
	// so a FAKE_PROVIDER_STORE or DATABASE_URL of the caller's does not
	// choose the store (without DATABASE_URL here, the memory store ignores
	// the caller's).
	cmd.Env = append(append(os.Environ(), env...), "PROVIDER_ADDR=127.0.0.1:0", "STRIPE_SECRET_KEY="+secret,
		"STRIPE_WEBHOOK_URL="+webhookURL, "STRIPE_WEBHOOK_SECRET="+secret, "READY_FILE="+ready)
	w, err := spawn(cmd, filepath.Join(dir, "fakestripe.log"))
	if err != nil {
		return nil, "", err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			w.base = strings.TrimSpace(string(b))
			return w, secret, nil
		}
		select {
		case err := <-w.done:
			return nil, "", fmt.Errorf("fakestripe exited (%v); its log is %s", err, filepath.Join(dir, "fakestripe.log"))
		case <-ctx.Done():
			w.stop()
			return nil, "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.stop()
			return nil, "", errors.New("fakestripe not ready within 30s")
		}
	}
}

// fakeDB is the pgbench scripts' :fakedb: "1" when the fake keeps its
// state in PostgreSQL, so that a baseline runs the fake's statements where
// the app's leg makes the fake run them, else "0".
func fakeDB(f flags) string {
	if f.fakeStore == "postgres" {
		return "1"
	}
	return "0"
}

// fakeStoreLine is the table's line on where the fake kept its state.
func fakeStoreLine(store string) string {
	if store == "postgres" {
		return "postgres (-fake-store=postgres): its own database on the load test's server; the pgbench baselines of an order run its two transactions too"
	}
	return "memory (-fake-store=memory, the default): no database work of its own, as Stripe's costs the shop none; the pgbench baselines of an order leave its transactions out"
}
