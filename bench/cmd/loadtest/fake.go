package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
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
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	secret := "sk_test_" + strings.ToLower(rand.Text())
	cmd := exec.Command(f.fake)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+fakeURL, "PROVIDER_ADDR="+addr, "STRIPE_SECRET_KEY="+secret,
		"STRIPE_WEBHOOK_URL="+webhookURL, "STRIPE_WEBHOOK_SECRET="+secret)
	w, err := spawn(cmd, filepath.Join(dir, "fakestripe.log"))
	if err != nil {
		return nil, "", err
	}
	w.base = "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Without the secret this answers 401, which proves it serves.
		resp, err := http.Get(w.base + "/v1/payment_intents/pi_none")
		if err == nil {
			resp.Body.Close()
			return w, secret, nil
		}
		select {
		case err := <-w.done:
			return nil, "", fmt.Errorf("fakestripe exited (%v); its log is %s", err, filepath.Join(dir, "fakestripe.log"))
		case <-ctx.Done():
			w.stop()
			return nil, "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.stop()
			return nil, "", errors.New("fakestripe not ready within 30s")
		}
	}
}
