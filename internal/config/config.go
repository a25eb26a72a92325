// Package config reads the application's settings from the environment,
// once, at start-up. Every setting has a default that suits local use, and
// a bad value stops the process with a message naming the variable.
package config

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Config is every setting of the web binary.
type Config struct {
	// DatabaseURL is the PostgreSQL connection string. When empty, LocalDB
	// must name a directory for a project-local server.
	DatabaseURL string
	// LocalDB is where `make run` keeps its own PostgreSQL when no
	// DATABASE_URL is given.
	LocalDB string
	// Addr is the listen address of the HTTP server.
	Addr string
	// LockTimeout is how long a claimed idempotency key stays locked.
	LockTimeout time.Duration
	// ProviderTimeout bounds one call to the payment provider.
	ProviderTimeout time.Duration
	// Demo turns on the demo controls (fault injection, stats).
	Demo bool
	// LogFormat is "text" or "json".
	LogFormat string
	// ShutdownTimeout is how long in-flight requests get to finish on
	// SIGTERM before they are cut off.
	ShutdownTimeout time.Duration
}

// Load reads the environment.
func Load() (Config, error) {
	c := Config{
		DatabaseURL: os.Getenv("DATABASE_URL"),
		LocalDB:     os.Getenv("LOCAL_DB"),
		Addr:        getenv("ADDR", "127.0.0.1:8080"),
		LogFormat:   getenv("LOG_FORMAT", "text"),
	}
	var err error
	if c.LockTimeout, err = duration("LOCK_TIMEOUT", 30*time.Second); err != nil {
		return c, err
	}
	if c.ProviderTimeout, err = duration("PROVIDER_TIMEOUT", 10*time.Second); err != nil {
		return c, err
	}
	if c.ShutdownTimeout, err = duration("SHUTDOWN_TIMEOUT", 15*time.Second); err != nil {
		return c, err
	}
	if c.Demo, err = boolean("DEMO", false); err != nil {
		return c, err
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c, fmt.Errorf(`LOG_FORMAT: want "text" or "json", got %q`, c.LogFormat)
	}
	if c.DatabaseURL == "" && c.LocalDB == "" {
		return c, fmt.Errorf("DATABASE_URL is not set: point it at PostgreSQL, or use `make run`, which starts a local server")
	}
	return c, nil
}

func getenv(key, fallback string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return fallback
}

func duration(key string, fallback time.Duration) (time.Duration, error) {
	v := os.Getenv(key)
	if v == "" {
		return fallback, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: want a positive Go duration such as 30s or 1m, got %q", key, v)
	}
	return d, nil
}

func boolean(key string, fallback bool) (bool, error) {
	v := os.Getenv(key)
	if v == "" {
		return fallback, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s: want 1 or 0 (true or false), got %q", key, v)
	}
	return b, nil
}
