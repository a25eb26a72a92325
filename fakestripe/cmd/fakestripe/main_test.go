package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An unknown FAKE_PROVIDER_STORE stops the fake at once, naming the
// choices, rather than falling back to a store nobody asked for.
func TestUnknownStoreIsRefused(t *testing.T) {
	t.Setenv("FAKE_PROVIDER_STORE", "redis")
	t.Setenv("STRIPE_SECRET_KEY", "sk_test_x")
	err := run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "postgres (the default) or memory") {
		t.Errorf("got %v, want the store refused", err)
	}
}

// With the memory store the fake serves without DATABASE_URL.
func TestMemoryStoreNeedsNoDatabase(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	t.Setenv("FAKE_PROVIDER_STORE", "memory")
	t.Setenv("DATABASE_URL", "")
	t.Setenv("STRIPE_SECRET_KEY", "sk_test_x")
	t.Setenv("PROVIDER_ADDR", "127.0.0.1:0")
	t.Setenv("READY_FILE", ready)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("got %v before it listened, want it serving", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("not listening after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("stop: got %v, want nil", err)
	}
}
