// Command chaos runs the chaos harness (package chaos) against a built web
// binary: shops, provider and PostgreSQL as separate processes on loopback,
// clients placing checkouts while instances are killed and paused, the
// database crashes and stalls, rows stay locked, the mail server hangs and
// the provider's webhooks arrive twice, late and out of order. It prints one summary line and the report as JSON, and
// exits 1 when an invariant broke or the history checker found an anomaly
// (2 when the run could not be made). -expect-anomaly turns that around for
// a mutated shop's run; -check checks a kept history.json without a run.
//
//	go build -o bin/web ./cmd/web && go run ./cmd/chaos -web bin/web
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"exactlyonce/bench/chaos"
	"exactlyonce/bench/chaos/history"
)

func main() {
	var cfg chaos.Config
	flag.StringVar(&cfg.Web, "web", "bin/web", "the built web binary")
	flag.StringVar(&cfg.Fake, "fake", "bin/fakestripe", "the built fake Stripe (make bin/fakestripe)")
	flag.IntVar(&cfg.Instances, "instances", 3, "shop processes")
	flag.IntVar(&cfg.Clients, "clients", 8, "concurrent clients")
	flag.IntVar(&cfg.Checkouts, "checkouts", 500, "logical checkouts in all")
	flag.DurationVar(&cfg.Duration, "duration", 30*time.Second, "the time the checkouts are spread over")
	flag.DurationVar(&cfg.Drain, "drain", 10*time.Second, "how long checkouts in flight then get to finish")
	flag.DurationVar(&cfg.Settle, "settle", 30*time.Second, "bound on the wait for the completer to settle every key")
	flag.Uint64Var(&cfg.Seed, "seed", 0, "random seed (0: pick one)")
	flag.IntVar(&cfg.Kills, "kills", 3, "kill -9 of an instance, each restarted")
	flag.IntVar(&cfg.Stalls, "stalls", 2, "SIGSTOP of an instance for longer than lock + completer grace")
	flag.IntVar(&cfg.DBCrashes, "db-crashes", 0, "PostgreSQL crashes (pg_ctl stop -m immediate, then start)")
	flag.IntVar(&cfg.DBStalls, "db-stalls", 0, "SIGSTOP of every PostgreSQL process for -db-stall, then SIGCONT")
	flag.DurationVar(&cfg.DBStall, "db-stall", 0, "how long PostgreSQL stays stopped (default 12s, past the shops' 10 s FinishTimeout)")
	flag.IntVar(&cfg.RowLocks, "row-locks", 0, "transactions holding the row locks of the newest keys (started first) for -row-lock")
	flag.DurationVar(&cfg.RowLock, "row-lock", 0, "how long a row lock is held (default 12s, past the shops' 10 s FinishTimeout)")
	flag.IntVar(&cfg.RowLockKeys, "row-lock-keys", 0, "how many keys a row lock holds (default 4)")
	flag.IntVar(&cfg.SMTPStalls, "smtp-stalls", 0, "spans in which the mail server accepts connections and then answers nothing, for -smtp-stall")
	flag.DurationVar(&cfg.SMTPStall, "smtp-stall", 0, "how long an SMTP stall lasts (default 12s, past the shops' 10 s SMTP timeout)")
	flag.BoolVar(&cfg.HA, "ha", false, "the shop's database as a pg_auto_failover formation (a primary and a standby), HAProxy in front of the shops")
	flag.BoolVar(&cfg.Async, "async", false, "with -ha, an asynchronous standby: the counterexample, whose failovers lose acknowledged commits")
	flag.IntVar(&cfg.Standbys, "standbys", 0, "with -ha, the primary's standbys: 1 (default) or 2 (three data nodes, number_sync_standbys 1)")
	flag.IntVar(&cfg.Failovers, "failovers", 0, "with -ha, failovers: the primary's node killed just after its standby's WAL receiver was paused for -tail-lag")
	flag.IntVar(&cfg.Switchovers, "switchovers", 0, "with -ha, pg_autoctl perform failover")
	flag.IntVar(&cfg.PrimaryKills, "primary-kills", 0, "with -ha, kill -9 of the primary's postmaster (its keeper restarts it)")
	flag.IntVar(&cfg.StandbyStops, "standby-stops", 0, "with -ha, the standby stopped for -standby-down, then started again")
	flag.DurationVar(&cfg.TailLag, "tail-lag", 0, "how long the standby's WAL receiver is paused before a failover kills the primary (default 1.5s)")
	flag.DurationVar(&cfg.StandbyDown, "standby-down", 0, "how long a stopped standby stays down (default 5s)")
	expectLoss := flag.Bool("expect-loss", false, "pass only if the run finds acknowledged writes lost (the asynchronous counterexample), and nothing else broken")
	flag.StringVar(&cfg.ProviderFaults, "provider-faults", "rates", "the provider's faults: rates (windows for a provider without rates), windows, or off")
	flag.Float64Var(&cfg.Authentication, "authentication", 0, "the share of checkouts (0 to 1) paid with the 3-D Secure card and a return_url, whose client plays the card holder at the bank's page (default 0.03; negative for none)")
	flag.DurationVar(&cfg.AuthenticationWindow, "authentication-window", 0, "the shops' AUTHENTICATION_WINDOW (default 4s)")
	flag.Float64Var(&cfg.RequiresAction, "requires-action", 0, "with -provider-faults rates, the share of confirms (0 to 1) answered requires_action (default 0.02; negative for none)")
	flag.Float64Var(&cfg.Processing, "processing", 0, "with -provider-faults rates, the share of confirms (0 to 1) answered processing (default 0.02; negative for none)")
	flag.DurationVar(&cfg.ProcessingFor, "processing-for", 0, "how long a processing intent stays so before it moves on (default 1.5s)")
	flag.Float64Var(&cfg.WebhookDuplicates, "webhook-duplicates", 0, "share of the provider's webhook events (0 to 1) delivered twice")
	flag.Float64Var(&cfg.WebhookReorder, "webhook-reorder", 0, "share of the provider's webhook events (0 to 1) held back so that later ones overtake them")
	flag.DurationVar(&cfg.WebhookDelay, "webhook-delay", 0, "how long the provider waits before each webhook delivery")
	flag.DurationVar(&cfg.ProviderDelay, "provider-delay", 0, "how long the provider waits before it handles each charging call, for the whole run (0: none)")
	flag.Float64Var(&cfg.SharedKeys, "shared-keys", 0, "share of placed checkouts (0 to 1) a second customer sends again with the same key and body, which must make an order of its own")
	flag.Float64Var(&cfg.Refunds, "refunds", 0, "share of placed orders (0 to 1) cancelled by their customer through the API, refunded in part by an operator on the admin listener, or both at once; the provider's refunds then fail at rates too")
	flag.IntVar(&cfg.LastItems, "last-items", 0, "stock of one contended product, received at the start and again every few seconds and put in a share of the carts, so that orders meet sold-out (0: every product made to order)")
	expectAnomaly := flag.String("expect-anomaly", "", "pass only if the history checker reports an anomaly whose kind contains this text (alternatives separated by |): a mutation's run")
	checkFile := flag.String("check", "", "check a recorded history (a run's history.json) and exit: 0 with no anomaly, 1 with some")
	flag.DurationVar(&cfg.LockTimeout, "lock-timeout", 0, "the shops' LOCK_TIMEOUT (default 3s)")
	flag.DurationVar(&cfg.CompleterGrace, "completer-grace", 0, "the shops' COMPLETER_GRACE (default 12s, longer than a client's longest silence between two asks; shorter, a 402 not completed to a client still retrying is counted, not a violation)")
	flag.DurationVar(&cfg.RequestTimeout, "request-timeout", 0, "how long a client waits for an answer (default 5s)")
	flag.StringVar(&cfg.Dir, "dir", "", "folder for logs and the database (default: a temporary one, deleted after a pass)")
	flag.BoolVar(&cfg.Net, "net", false, "each shop and the provider in a network namespace of its own, on a bridge with PostgreSQL and the mail server (needs root and iproute2); needed by -partitions and -netem")
	flag.IntVar(&cfg.Partitions, "partitions", 0, "with -net, network partitions: a shop cut from PostgreSQL (both ways, its queries lost, or its answers lost) or from the provider (both ways, or its answers lost), or the provider's webhooks cut, each drawn at random, each healed after up to -partition")
	flag.DurationVar(&cfg.Partition, "partition", 0, "how long a partition lasts at most (drawn from half of it to all of it; default 10s)")
	flag.IntVar(&cfg.LossyLinks, "netem", 0, "with -net, spans of a shop on a lossy link (tc netem, or HTB lanes where the kernel has no netem): its packets both ways delayed, lost and reordered as -netem-delay, -netem-loss and -netem-reorder say, each for up to -netem-for")
	flag.DurationVar(&cfg.LinkFor, "netem-for", 0, "how long a lossy link lasts at most (default 10s)")
	flag.DurationVar(&cfg.Link.Delay, "netem-delay", 0, "a lossy link's delay per packet (default 100ms; with HTB lanes, the slow lane's time for a full-sized packet)")
	flag.DurationVar(&cfg.Link.Jitter, "netem-jitter", 0, "a lossy link's jitter, with netem (default 50ms)")
	flag.Float64Var(&cfg.Link.Loss, "netem-loss", 0, "a lossy link's share of packets lost (default 0.05)")
	flag.Float64Var(&cfg.Link.Reorder, "netem-reorder", 0, "a lossy link's share of packets sent at once, ahead of the delayed ones (default 0.25)")
	verbose := flag.Bool("v", false, "log each step to stderr")
	clockSkew := flag.String("clock-skew", "", "each shop's wall clock off the machine's and the database's, OFFSET[/DRIFT per minute] per shop, comma separated (\"-5m,+3m,+90s/+30s\"; shops past the last take the list again); the web binary must be built with the skewed runtime (make bin/web-skew)")
	flag.Parse()
	skews, err := chaos.ParseClockSkews(*clockSkew)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	cfg.ClockSkews = skews
	if *checkFile != "" {
		os.Exit(checkRecorded(*checkFile))
	}
	if *verbose {
		cfg.Log = os.Stderr
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	fmt.Println(rep.Summary())
	fmt.Println(string(rep.JSON()))
	fmt.Print(rep.History.Text())
	if *expectAnomaly != "" {
		if !rep.History.Expected(*expectAnomaly) {
			fmt.Printf("chaos: the history checker found no %q: the mutation was not caught (seed %d)\n", *expectAnomaly, rep.Config.Seed)
			os.Exit(1)
		}
		fmt.Printf("chaos: the mutation was caught: %s\n", rep.History.Summary())
		return
	}
	if *expectLoss {
		found, other := rep.Loss()
		fmt.Printf("chaos: acknowledged writes lost: %d violations that show it, %d that the run's evidence shows they caused, %d that they do not explain\n",
			found, rep.LostWriteEffects(), other)
		if found == 0 || other > 0 {
			os.Exit(1)
		}
		return
	}
	if !rep.Passed() {
		os.Exit(1)
	}
}

// checkRecorded checks a history a run wrote, with porcupine's pages
// beside it, and says what it found.
func checkRecorded(path string) int {
	h, err := history.Read(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 2
	}
	r := history.Check(h, filepath.Dir(path))
	fmt.Printf("chaos: seed %d: %s\n", h.Seed, r.Summary())
	fmt.Print(r.Text())
	if len(r.Anomalies) > 0 {
		return 1
	}
	return 0
}
