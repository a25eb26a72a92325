package config

import (
	"strings"
	"testing"
	"time"
)

func TestLockTimeoutMustOutlastProviderTimeout(t *testing.T) {
	for _, tc := range []struct {
		lock, provider time.Duration
		ok             bool
	}{
		{30 * time.Second, 10 * time.Second, true}, // the defaults
		{15 * time.Second, 10 * time.Second, true}, // the least the error suggests
		{10 * time.Second, 10 * time.Second, false},
		{14 * time.Second, 10 * time.Second, false}, // three quarters of it leave no second to spare
		{time.Second, 5 * time.Second, false},
	} {
		err := checkLockTimeout(tc.lock, tc.provider)
		if (err == nil) != tc.ok {
			t.Errorf("lock %s, provider %s: got %v, want ok=%v", tc.lock, tc.provider, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "LOCK_TIMEOUT") {
			t.Errorf("got %q, want the error to name LOCK_TIMEOUT", err)
		}
	}
}

func TestLoadRefusesShortLock(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://localhost/x")
	t.Setenv("LOCK_TIMEOUT", "5s")
	t.Setenv("PROVIDER_TIMEOUT", "10s")
	_, err := Load()
	if err == nil || !strings.Contains(err.Error(), "at least 15s") {
		t.Errorf("got %v, want LOCK_TIMEOUT refused with the least acceptable value", err)
	}
}
