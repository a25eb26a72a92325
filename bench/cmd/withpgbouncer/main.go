// Command withpgbouncer starts PgBouncer in transaction pooling in front of
// the PostgreSQL server that TEST_DATABASE_URL names (bench/cmd/testpg's, under
// make test), or of a throwaway one it starts when that is not set, then
// runs a command with
//
//	TEST_DATABASE_URL        the server through PgBouncer (pgx in cache_describe mode)
//	TEST_ADMIN_DATABASE_URL  the server directly, for CREATE DATABASE and migrations
//
// and stops what it started when the command ends, exiting with its
// status. `make test/pgbouncer` runs the engine and API tests through it:
//
//	go run ./cmd/withpgbouncer -- go test ./internal/checkout/
package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"

	"exactlyonce/bench/pgbouncer"
	"exactlyonce/localpg"
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
	pg, err := server(ctx)
	if err != nil {
		return 0, err
	}
	defer pg.stop()
	b, err := pgbouncer.Start(ctx, pg.url, pgbouncer.Options{})
	if err != nil {
		return 0, err
	}
	defer b.Stop()
	fmt.Fprintf(os.Stderr, "withpgbouncer: PostgreSQL %s, PgBouncer (transaction pooling) on 127.0.0.1:%d\n", pg.where, b.Port())
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(),
		"TEST_DATABASE_URL="+b.URL("postgres"),
		"TEST_ADMIN_DATABASE_URL="+pg.url,
	)
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, err
}

// backend is the PostgreSQL server PgBouncer is put in front of.
type backend struct {
	url   string // a superuser URL of its maintenance database
	where string // for the log line
	stop  func()
}

// server returns the server that TEST_DATABASE_URL names when it is set
// (bench/cmd/testpg's, under make test, so that a run has one server), and
// otherwise starts a throwaway one, which stop removes. A TEST_DATABASE_URL
// that already goes through a pooler (TEST_ADMIN_DATABASE_URL set) is not
// reused, nor one with a password, which PgBouncer (trust, an empty
// password in its auth file) could not pass on.
func server(ctx context.Context) (backend, error) {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" && os.Getenv("TEST_ADMIN_DATABASE_URL") == "" {
		if parsed, err := url.Parse(u); err == nil {
			if _, hasPassword := parsed.User.Password(); !hasPassword {
				return backend{url: u, where: "of TEST_DATABASE_URL", stop: func() {}}, nil
			}
		}
	}
	dir, err := os.MkdirTemp("/tmp", "pgbouncer-pg-")
	if err != nil {
		return backend{}, err
	}
	srv, err := localpg.Start(ctx, localpg.Options{DataDir: dir, Throwaway: true})
	if err != nil {
		os.Remove(dir)
		return backend{}, err
	}
	return backend{url: srv.URL("postgres"), where: "in " + dir, stop: func() { srv.Stop(context.Background()) }}, nil
}
