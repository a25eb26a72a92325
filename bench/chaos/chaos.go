// Package chaos is a harness that tries to make the shop charge a customer
// twice, lose an order, or answer 500. It starts a PostgreSQL server of its
// own (localpg), the fake payment provider and several shop
// instances as separate processes of the web binary, all on loopback; drives
// clients that place checkouts through the JSON API, retrying each with one
// Idempotency-Key; and meanwhile kills instances (kill -9), pauses them
// (SIGSTOP, longer than a lock plus the completer's grace, as a GC pause or
// a frozen VM would), crashes PostgreSQL (pg_ctl stop -m immediate), pauses
// every PostgreSQL process (pgstall.go), holds the row locks of keys in
// flight (rowlock.go), stalls the mail server (smtpproxy.go) and turns on
// the provider's faults. Then it lets the completer settle every key and
// checks, in SQL, against what the clients were told and in the shops'
// logs, that every invariant of exactly-once charging held (see check.go).
// With Config.Net the shops and the provider run in network namespaces of
// their own instead of on loopback, and partitions cut their packets
// (netns.go, partition.go).
//
// Everything is bounded: the number of checkouts, the time clients drive,
// the time allowed to settle; the run stops itself and its processes.
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"
)

// Config is one run.
type Config struct {
	// Web is the path of the built web binary (cmd/web).
	Web string
	// Fake is the path of the built fake Stripe (fakestripe/cmd/fakestripe),
	// which runs as a process of its own on a PostgreSQL of its own.
	Fake string
	// Instances is how many shop processes serve the clients.
	Instances int
	// Clients place checkouts concurrently, each as one API customer.
	Clients int
	// Checkouts is how many logical checkouts the clients place in all.
	Checkouts int
	// Duration is the time the checkouts are spread over; Drain is what
	// the checkouts then in flight get to finish (and clients behind the
	// schedule, half of it to start theirs) before they are left to the
	// completer; Settle bounds the wait for every key to be settled.
	Duration, Drain, Settle time.Duration
	// Seed makes the clients' and the disruptions' choices repeatable
	// (timing still varies); 0 picks one.
	Seed uint64

	// The shop's settings (LOCK_TIMEOUT, PROVIDER_TIMEOUT, COMPLETER_GRACE,
	// COMPLETER_INTERVAL). Short, so that a run sees many takeovers.
	LockTimeout, ProviderTimeout, CompleterGrace, CompleterInterval time.Duration
	// RequestTimeout is how long a client waits for one answer.
	RequestTimeout time.Duration

	// How many of each disruption the run makes, spread over Duration.
	Kills, Stalls, DBCrashes, DBStalls, RowLocks, SMTPStalls int
	// DBStall is how long every PostgreSQL process stays stopped, RowLock
	// how long RowLockKeys keys stay locked, SMTPStall how long the mail
	// server stays silent. The first two are past the shops'
	// FinishTimeout (the engine's 10 s, which no variable changes), so
	// that finishes time out against them; the last past the shops' SMTP
	// timeout (10 s) and the outbox job's timeout (JOB_RESCUE_AFTER / 2).
	DBStall, RowLock, SMTPStall time.Duration
	RowLockKeys                 int
	// HA runs the shop's database as a pg_auto_failover formation of a
	// primary and a standby (synchronous unless Async) and puts HAProxy in
	// front of the shops (see ha.go); the PostgreSQL crashes and stalls of
	// DBCrashes and DBStalls are for a single server and are refused.
	HA, Async bool
	// Standbys, with HA, is how many standbys the primary has: 1 (the
	// default, for 0) or 2, both synchronous with number_sync_standbys 1
	// (hapg.Options.Standbys), so that one standby away never leaves the
	// primary committing alone.
	Standbys int
	// The failover disruptions, with HA: Failovers kill the primary's node
	// TailLag after its standby's WAL receiver was paused; Switchovers are
	// `pg_autoctl perform failover`; PrimaryKills kill -9 the primary's
	// postmaster only; StandbyStops stop the standby for StandbyDown.
	Failovers, Switchovers, PrimaryKills, StandbyStops int
	TailLag, StandbyDown                               time.Duration

	// ProviderFaults is how the provider fails while clients drive:
	// "rates" (each call draws a fault; a provider without rates falls
	// back to windows), "windows" (one fault at a time, for a moment), or
	// "off".
	ProviderFaults string
	// With "rates", the shares of confirms (0 to 1) the provider answers
	// requires_action (nothing charged: the shop cancels and answers
	// payment-not-completed) and processing (the outcome unknown until the
	// intent moves on, ProcessingFor later); zero means the default, 2 %
	// each, a negative share none.
	RequiresAction, Processing float64
	ProcessingFor              time.Duration
	// Authentication is the share of checkouts (0 to 1) paid with the card
	// whose bank asks for 3-D Secure, with a return_url: the client is
	// answered 202 and plays the card holder at the fake bank's page
	// (completes it once or twice at once, fails it, or never comes back,
	// now or late), then asks again with the same key; zero means the
	// default, 3 %, a negative share none. AuthenticationWindow is the
	// shops' AUTHENTICATION_WINDOW, short so that an abandoned one is
	// canceled within the run (default 4 s).
	Authentication       float64
	AuthenticationWindow time.Duration
	// The provider's webhook faults, for the whole run: the shares of
	// events (0 to 1) delivered twice, and held back so that later ones
	// overtake them, and a delay before every delivery. The webhooks go to
	// the shops' front door (HAProxy in a failover run, else the first
	// shop), signed with a secret the run makes.
	WebhookDuplicates, WebhookReorder float64
	WebhookDelay                      time.Duration
	// ProviderDelay is how long the provider waits before it handles each
	// charging call, for the whole run (Stripe's take a few hundred
	// milliseconds; the fake's, none): with it, a paused shop is paused
	// with attempts inside their provider call, which resume with the
	// provider's answer waiting.
	ProviderDelay time.Duration
	// SharedKeys is the share of placed checkouts (0 to 1) that the
	// client's twin, a second customer, sends again with the same key and
	// body (twin.go); zero means none.
	SharedKeys float64
	// Refunds is the share of placed orders (0 to 1) that their customer
	// cancels, or an operator refunds in part on the admin listener, or
	// both at once (refunds.go); LastItems, when not 0, is the stock of the
	// contended product: received at the start and again every
	// restockEvery, and put in a share of the carts, so that sold-outs
	// happen and cancels give stock back. Zero is none of either.
	Refunds   float64
	LastItems int
	// ClockSkews sets each shop's wall clock off and drifting (skew.go),
	// shop i taking ClockSkews[i % len]; the web binary must be built
	// with the skewed runtime (make bin/web-skew). None skews no clock.
	ClockSkews []ClockSkew
	// Net puts each shop and the provider in a network namespace of its
	// own (netns.go; root and iproute2): needed by Partitions and
	// LossyLinks. Partitions cut a shop from PostgreSQL or the provider,
	// or the provider's webhooks, each for up to Partition (default 10 s);
	// LossyLinks slow, lose and reorder a shop's packets as Link says for
	// up to LinkFor (default 10 s) (partition.go).
	Net        bool
	Partitions int
	Partition  time.Duration
	LossyLinks int
	LinkFor    time.Duration
	Link       Link

	// Dir is where processes' logs and the database go; empty makes one
	// under /tmp, deleted after a run that passed.
	Dir string
	// Log receives a line per step.
	Log io.Writer
}

// withDefaults fills what is zero.
func (c Config) withDefaults() Config {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&c.LockTimeout, 3*time.Second)
	set(&c.ProviderTimeout, time.Second)
	// Every run holds the completer to its promise (see gracePromised): no
	// client that still retries meets its verdict, however long the
	// database was away. A shorter grace (-completer-grace) measures how
	// often it then does, without failing on it.
	set(&c.CompleterGrace, 12*time.Second)
	set(&c.CompleterInterval, 500*time.Millisecond)
	set(&c.RequestTimeout, 5*time.Second)
	set(&c.Duration, 30*time.Second)
	set(&c.Drain, 10*time.Second)
	set(&c.Settle, 30*time.Second)
	set(&c.DBStall, 12*time.Second)
	set(&c.RowLock, 12*time.Second)
	set(&c.SMTPStall, 12*time.Second)
	set(&c.TailLag, 1500*time.Millisecond)
	set(&c.StandbyDown, 5*time.Second)
	set(&c.ProcessingFor, 1500*time.Millisecond)
	set(&c.AuthenticationWindow, 4*time.Second)
	set(&c.Partition, 10*time.Second)
	set(&c.LinkFor, 10*time.Second)
	// A lossy link's defaults, each where unset.
	set(&c.Link.Delay, 100*time.Millisecond)
	set(&c.Link.Jitter, 50*time.Millisecond)
	if c.Link.Loss == 0 {
		c.Link.Loss = 0.05
	}
	if c.Link.Reorder == 0 {
		c.Link.Reorder = 0.25
	}
	switch {
	case c.Authentication == 0:
		c.Authentication = 0.03
	case c.Authentication < 0:
		c.Authentication = 0
	}
	for _, share := range []*float64{&c.RequiresAction, &c.Processing} {
		switch {
		case *share == 0:
			*share = 0.02
		case *share < 0:
			*share = 0
		}
	}
	if c.RowLockKeys <= 0 {
		c.RowLockKeys = 4
	}
	c.Instances = max(c.Instances, 1)
	c.Clients = max(c.Clients, 1)
	c.Checkouts = max(c.Checkouts, 1)
	if c.Seed == 0 {
		c.Seed = rand.Uint64()
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c
}

// stall is how long a paused instance stays paused: past its lock and the
// completer's grace, so that a takeover and the completer's verdict can come
// while the paused attempt's provider call is still to land.
func (c Config) stall() time.Duration {
	return c.LockTimeout + c.CompleterGrace + time.Second
}

// gracePromised reports whether the completer's grace is longer than a
// client's longest silence between two asks of one key: a request that
// times out, then the longest wait before the next (a Retry-After, or the
// backoff's cap). Then no client that is still retrying may meet the
// completer's "not completed".
func (c Config) gracePromised() bool {
	return c.CompleterGrace > c.RequestTimeout+max(maxRetryAfter, clientMaxDelay)+clientBaseDelay
}

// Run makes one run and reports what it saw. The error is for a run that
// could not be made (no binary, no PostgreSQL); broken invariants are in
// the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	if cfg.HA && (cfg.DBCrashes > 0 || cfg.DBStalls > 0) {
		return nil, errors.New("PostgreSQL crashes and stalls are for a single server; with a formation, use failovers, switchovers, primary kills and standby stops")
	}
	if !cfg.HA && (cfg.Async || cfg.Standbys > 0 || cfg.Failovers+cfg.Switchovers+cfg.PrimaryKills+cfg.StandbyStops > 0) {
		return nil, errors.New("standbys, asynchronous or not, and failover disruptions need a formation (HA)")
	}
	if !cfg.Net && cfg.Partitions+cfg.LossyLinks > 0 {
		return nil, errors.New("partitions and lossy links need the shops in network namespaces (Net, -net)")
	}
	if !(cfg.Link.Loss >= 0 && cfg.Link.Loss < 1 && cfg.Link.Reorder >= 0 && cfg.Link.Reorder <= 1) {
		return nil, errors.New("a lossy link's loss and reordering are shares, from 0 to 1 (loss below 1)")
	}
	if cfg.Standbys > 2 {
		return nil, errors.New("a formation has 1 or 2 standbys")
	}
	for _, share := range []float64{cfg.WebhookDuplicates, cfg.WebhookReorder, cfg.SharedKeys, cfg.Refunds} {
		if !(share >= 0 && share <= 1) {
			return nil, errors.New("webhook duplicates and reordering, shared keys and refunds are shares, from 0 to 1")
		}
	}
	if !(cfg.Authentication <= 1) {
		return nil, errors.New("the 3-D Secure share is a share of the checkouts, from 0 to 1")
	}
	if !(cfg.RequiresAction <= 1 && cfg.Processing <= 1) {
		return nil, errors.New("the requires_action and processing rates are shares of the confirms, from 0 to 1")
	}
	began := time.Now()
	dir, keep := cfg.Dir, true
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("/tmp", "chaos-"); err != nil {
			return nil, err
		}
		keep = false
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// The whole run is bounded, startup and settling included.
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration+cfg.Drain+cfg.Settle+outboxSettle+2*time.Minute)
	defer cancel()

	logf := func(format string, args ...any) {
		fmt.Fprintf(cfg.Log, "%s chaos: "+format+"\n", append([]any{time.Since(began).Round(time.Millisecond)}, args...)...)
	}
	cl, err := startCluster(ctx, cfg, dir, logf)
	if err != nil {
		return nil, err
	}
	defer cl.stop()

	rep := &Report{Config: reportConfig(cfg), Dir: dir, Violations: []Violation{}}
	if rep.Clocks, err = cl.checkClocks(ctx, began, logf); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	products, err := cl.products(ctx)
	if err != nil {
		return nil, err
	}

	logf("driving %d checkouts with %d clients over %d instances for up to %s", cfg.Checkouts, cfg.Clients, cfg.Instances, cfg.Duration)
	driveCtx, stopDisrupting := context.WithCancel(ctx)
	disrupted := make(chan Disruptions, 1)
	go func() { disrupted <- cl.disrupt(driveCtx, rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), logf) }()
	rep.Clients = drive(ctx, cl, cfg, products, rng, logf)
	logf("drive over; waiting for the disruptions in progress to end")
	stopDisrupting()
	rep.Disruptions = <-disrupted
	rep.Disruptions.Windows = windowReports(rep.Disruptions.windows, rep.Clients.began, rep.Clients.created)
	rep.Clients.CreatedPerSecondClear = clearRate(rep.Disruptions.windows, rep.Clients.began, rep.Clients.began.Add(cfg.Duration), rep.Clients.created)

	logf("settling: every instance up, provider healthy, waiting for the completer")
	if err := cl.heal(ctx); err != nil {
		return nil, fmt.Errorf("heal: %w", err)
	}
	rep.SettleSeconds, rep.Unsettled = cl.settle(ctx, cfg.Settle)
	logf("settled in %.1f s; waiting for the outbox's jobs", rep.SettleSeconds)
	rep.Outbox.SettleSeconds, rep.Outbox.Left = cl.settleJobs(ctx, outboxSettle)
	cl.endClocks(ctx, rep.Clocks, began, logf)
	mails := cl.mail.Messages()
	rep.Mail = mailTotals(mails)
	logged, err := cl.readShopLogs()
	if err != nil {
		return nil, fmt.Errorf("read the shops' logs: %w", err)
	}
	rep.Logged5xx = logged.statuses
	if err := check(ctx, cfg, cl.db, cl.providerDB, mails, rep); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	if err := checkRefunds(ctx, cl.db, cl.providerDB, mails, rep); err != nil {
		return nil, fmt.Errorf("check the refunds: %w", err)
	}
	if err := checkHistory(ctx, cfg, dir, cl.db, cl.providerDB, rep); err != nil {
		return nil, fmt.Errorf("check the history: %w", err)
	}
	logf("%s", rep.History.Summary())
	for _, ex := range logged.errors500 {
		rep.violate(violServerErrorLog, ex)
	}
	if cl.ha != nil {
		cl.writeMonitorEvents(ctx, began, logf)
	}
	rep.Seconds = time.Since(began).Seconds()
	if rep.Passed() && !keep {
		cl.removeDir = true
	}
	return rep, nil
}
