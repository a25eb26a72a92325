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

// startFake starts the fake Stripe (-fake) as a process of its own, on a
// database of its own on the load test's server, sending its webhooks to
// webhookURL; it returns the process and the secret key (also the webhook
// secret) the shop must use. Apart, its CPU is measured on its own
// (Result.ProviderCPU) and its statements do not count as the shop's.
func startFake(ctx context.Context, f flags, dir, direct, webhookURL string) (*webProc, string, error) {
	fakeURL, err := localpg.OwnDatabase(ctx, direct, "fakestripe")
	if err != nil {
		return nil, "", err
	}
	secret := "sk_test_" + strings.ToLower(rand.Text())
	// A port of the fake's own choosing, written to READY_FILE once it
	// serves: no free port picked here that another process could take
	// before the fake binds it.
	ready := filepath.Join(dir, "fakestripe.url")
	_ = os.Remove(ready)
	cmd := exec.Command(f.fake)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+fakeURL, "PROVIDER_ADDR=127.0.0.1:0", "STRIPE_SECRET_KEY="+secret,
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
