// Command runlocal is `make run`: it starts what the shop needs beside it,
// each a process (or server) of its own, then the shop, and stops them all
// on Ctrl-C, the shop first:
//
//   - PostgreSQL, project-local in -data (localpg), unless
//     DATABASE_URL names a server: the shop's database, and a database of
//     the fake's own (fakestripe) on the same server;
//   - the fake Stripe (-fake, fakestripe/cmd/fakestripe), on a free
//     loopback port, sending its signed webhooks to the shop;
//   - the mail catcher (-catcher, mailcatcher/cmd/mailcatcher) on free
//     loopback ports: SMTP for the confirmations, and an HTTP listing the
//     shop's admin listener shows at /mail (unless SMTP_ADDR names a mail
//     server);
//   - the shop (-web, cmd/web), told where each is.
//
// The shop's own settings (ADDR, DEMO, ADMIN_ADDR, SESSION_SECRET, …) pass
// through from the environment. Nothing here needs a fixed port but the
// shop's ADDR (127.0.0.1:8080 unless set).
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"exactlyonce/localpg"
)

func main() {
	web := flag.String("web", "bin/web", "the shop's binary")
	fake := flag.String("fake", "bin/fakestripe", "the fake Stripe's binary")
	catcher := flag.String("catcher", "bin/mailcatcher", "the mail catcher's binary")
	data := flag.String("data", ".data", "where the local PostgreSQL and the logs are kept")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *web, *fake, *catcher, *data); err != nil {
		fmt.Fprintln(os.Stderr, "make run:", err)
		os.Exit(1)
	}
}

// catcherKept is how many caught mails the catcher keeps: the demo shows
// the latest, and memory stays bounded.
const catcherKept = 1000

func run(ctx context.Context, webBin, fakeBin, catcherBin, data string) error {
	shopURL, fakeURL, stopPG, err := databases(ctx, data)
	if err != nil {
		return err
	}
	defer stopPG()

	env := []string{"DATABASE_URL=" + shopURL}
	if os.Getenv("SMTP_ADDR") == "" {
		ready := filepath.Join(data, "mailcatcher.ready")
		_ = os.Remove(ready)
		catcher, err := start(catcherBin, filepath.Join(data, "mailcatcher.log"), nil,
			"-keep", strconv.Itoa(catcherKept), "-ready", ready)
		if err != nil {
			return err
		}
		defer catcher.stop()
		line, err := waitForFile(ctx, "the mail catcher", ready, catcher)
		if err != nil {
			return err
		}
		smtp, listing, ok := strings.Cut(line, " ")
		if !ok {
			return fmt.Errorf("the mail catcher wrote %q to %s, not \"<smtp address> <listing URL>\"", line, ready)
		}
		env = append(env, "SMTP_ADDR="+smtp, "MAIL_CATCHER_URL="+listing)
		say("mail catcher: SMTP on %s, its mail at /mail on the admin listener", smtp)
	}

	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = "127.0.0.1:8080"
		env = append(env, "ADDR="+addr)
	}
	if os.Getenv("PAYMENT_PROVIDER") == "stripe" {
		// Stripe's test mode: its keys come from the environment, and
		// there is no fake to start.
		say("paying through Stripe's API (PAYMENT_PROVIDER=stripe)")
		return serve(ctx, webBin, env, nil, data)
	}
	secret, hookSecret := "sk_test_"+strings.ToLower(rand.Text()), "whsec_"+strings.ToLower(rand.Text())
	ready := filepath.Join(data, "fakestripe.url")
	_ = os.Remove(ready)
	// Its state on its database, whatever FAKE_PROVIDER_STORE the caller's
	// environment holds: the memory store is the load test's, and `make
	// run`'s charges must outlive a restart of the fake.
	fake, err := start(fakeBin, filepath.Join(data, "fakestripe.log"), []string{"FAKE_PROVIDER_STORE=postgres", "DATABASE_URL=" + fakeURL, "PROVIDER_ADDR=127.0.0.1:0",
		"STRIPE_SECRET_KEY=" + secret, "STRIPE_WEBHOOK_URL=http://" + addr + "/webhooks/stripe",
		"STRIPE_WEBHOOK_SECRET=" + hookSecret, "READY_FILE=" + ready})
	if err != nil {
		return err
	}
	defer fake.stop()
	base, err := waitForFile(ctx, "the fake Stripe", ready, fake)
	if err != nil {
		return err
	}
	say("fake Stripe on %s (its log: %s)", base, filepath.Join(data, "fakestripe.log"))

	env = append(env, "PAYMENT_PROVIDER=fake", "STRIPE_API_BASE="+base, "STRIPE_SECRET_KEY="+secret,
		"STRIPE_WEBHOOK_SECRET="+hookSecret)
	return serve(ctx, webBin, env, fake, data)
}

// serve runs the shop until ctx ends or it (or the fake, when there is
// one) stops; the deferred stops then run, the shop's first.
func serve(ctx context.Context, webBin string, env []string, fake *proc, data string) error {
	shop, err := start(webBin, "", env)
	if err != nil {
		return err
	}
	defer shop.stop()
	var fakeDone <-chan error
	if fake != nil {
		fakeDone = fake.done
	}
	select {
	case <-ctx.Done():
		say("stopping: the shop, then what was started beside it")
		return nil
	case err := <-shop.done:
		return fmt.Errorf("the shop stopped: %v", err)
	case err := <-fakeDone:
		return fmt.Errorf("the fake Stripe stopped: %v; its log: %s", err, filepath.Join(data, "fakestripe.log"))
	}
}

// databases returns the shop's database URL and the fake's, and a func that
// stops what it started: with DATABASE_URL, that server (the fake on a
// database of its own there, or FAKE_DATABASE_URL); without, a
// project-local server in data/postgres, stopped at the end.
func databases(ctx context.Context, data string) (shop, fake string, stop func(), err error) {
	stop = func() {}
	shop = os.Getenv("DATABASE_URL")
	if shop == "" {
		dir, fellBack, err := localpg.UsableDataDir(filepath.Join(data, "postgres"))
		if err != nil {
			return "", "", stop, err
		}
		if fellBack {
			say("the postgres user cannot reach %s; keeping the data in %s", filepath.Join(data, "postgres"), dir)
		}
		srv, err := localpg.Start(ctx, localpg.Options{DataDir: dir})
		if err != nil {
			return "", "", stop, err
		}
		say("local PostgreSQL ready in %s", dir)
		shop = srv.URL("postgres")
		stop = func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := srv.Stop(sctx); err != nil {
				say("%v", err)
			}
		}
	}
	if fake = os.Getenv("FAKE_DATABASE_URL"); fake != "" {
		return shop, fake, stop, nil
	}
	if fake, err = localpg.OwnDatabase(ctx, shop, "fakestripe"); err != nil {
		stop()
		return "", "", func() {}, fmt.Errorf("the fake's database (or set FAKE_DATABASE_URL): %w", err)
	}
	return shop, fake, stop, nil
}

// proc is a child process: it gets a process group of its own, so that a
// Ctrl-C reaches this launcher only, which stops the children in order;
// and it dies with the launcher (Pdeathsig).
type proc struct {
	cmd  *exec.Cmd
	done chan error
}

func start(bin, logPath string, env []string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = f, f
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// stop asks the process to stop (SIGTERM: the shop finishes its requests in
// flight) and waits for it, killing it after stopGrace.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done: //nolint:errcheck // stopped on purpose: how it exited says nothing
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done //nolint:errcheck // killed on purpose
	}
}

// stopGrace is longer than the shop's own SHUTDOWN_TIMEOUT and cut-off.
const stopGrace = 40 * time.Second

// waitForFile waits for what p runs (named who) to write the line that
// says where it serves to path.
func waitForFile(ctx context.Context, who, path string, p *proc) (string, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b)), nil
		}
		select {
		case err := <-p.done:
			return "", fmt.Errorf("%s exited before it served: %v", who, err)
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s did not serve within 60 s", who)
		}
	}
}

func say(format string, args ...any) { fmt.Fprintf(os.Stderr, "make run: "+format+"\n", args...) }
