// Command withpgbouncer starts a throwaway PostgreSQL and PgBouncer in
// transaction pooling in front of it, then runs a command with
//
//	TEST_DATABASE_URL        the server through PgBouncer (pgx in cache_describe mode)
//	TEST_ADMIN_DATABASE_URL  the server directly, for CREATE DATABASE and migrations
//
// and stops both when the command ends, exiting with its status. `make
// test/pgbouncer` runs the engine and API tests through it:
//
//	go run ./cmd/withpgbouncer -- go test ./internal/checkout/
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"exactlyonce/internal/localpg"
	"exactlyonce/internal/pgbouncer"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: withpgbouncer -- command [args...]")
		os.Exit(2)
	}
	code, err := run(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "withpgbouncer:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(args []string) (int, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("/tmp", "pgbouncer-pg-")
	if err != nil {
		return 0, err
	}
	srv, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Throwaway: true})
	if err != nil {
		os.Remove(dir)
		return 0, err
	}
	defer srv.Stop(context.Background())
	b, err := pgbouncer.Start(ctx, srv.URL("postgres"), pgbouncer.Options{})
	if err != nil {
		return 0, err
	}
	defer b.Stop()
	fmt.Fprintf(os.Stderr, "withpgbouncer: PostgreSQL in %s, PgBouncer (transaction pooling) on 127.0.0.1:%d\n", dir, b.Port())
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(),
		"TEST_DATABASE_URL="+b.URL("postgres"),
		"TEST_ADMIN_DATABASE_URL="+srv.URL("postgres"),
	)
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, err
}
