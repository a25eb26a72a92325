package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// startFake starts the fake Stripe (-fake) as a process of its own, on a
// database of its own on the load test's server, sending its webhooks to
// webhookURL; it returns the process and the secret key (also the webhook
// secret) the shop must use. Apart, its CPU is measured on its own
// (Result.ProviderCPU) and its statements do not count as the shop's.
func startFake(ctx context.Context, f flags, dir, direct, webhookURL string) (*webProc, string, error) {
	fakeURL, err := ownDatabase(ctx, direct, "fakestripe")
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

// ownDatabase creates the database name on direct's server, if missing,
// and returns its URL.
func ownDatabase(ctx context.Context, direct, name string) (string, error) {
	conn, err := pgx.Connect(ctx, direct)
	if err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	u, err := url.Parse(direct)
	if err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	u.Path = "/" + name
	return u.String(), nil
}
