package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Disruptions counts what a run did to the system while clients drove.
type Disruptions struct {
	Kills     int `json:"kills"`
	Stalls    int `json:"stalls"`
	DBCrashes int `json:"db_crashes"`
	// DBStalls are SIGSTOPs of every PostgreSQL process; RowLocks are
	// transactions that held the row locks of the newest keys (KeysLocked
	// in all, StartedKeysLocked of them in flight); SMTPStalls are spans
	// in which the mail server accepted and then answered nothing.
	DBStalls          int `json:"db_stalls"`
	RowLocks          int `json:"row_locks"`
	KeysLocked        int `json:"keys_locked"`
	StartedKeysLocked int `json:"started_keys_locked"`
	SMTPStalls        int `json:"smtp_stalls"`
	// The failover disruptions made (see ha.go), and how often the
	// primary changed in all.
	Failovers      int `json:"failovers,omitempty"`
	Switchovers    int `json:"switchovers,omitempty"`
	PrimaryKills   int `json:"primary_kills,omitempty"`
	StandbyStops   int `json:"standby_stops,omitempty"`
	PrimaryChanges int `json:"primary_changes,omitempty"`
	// ProviderFaults is "rates" (the provider draws a fault per call),
	// "windows" (one fault at a time, for a moment), or "off".
	// Partitions are the network partitions made (partition.go), by
	// kind; LossyLinks the spans of a shop on a lossy link, made with
	// LinkMethod (netem, or HTB lanes where the kernel has no netem).
	Partitions     int            `json:"partitions,omitempty"`
	PartitionKinds map[string]int `json:"partition_kinds,omitempty"`
	LossyLinks     int            `json:"lossy_links,omitempty"`
	LinkMethod     string         `json:"link_method,omitempty"`
	ProviderFaults string         `json:"provider_faults"`
	FaultWindows   int            `json:"fault_windows,omitempty"`
	// Errors are disruptions that could not be made, such as a restart
	// that failed; the settle step restarts what is down.
	Errors []string `json:"errors,omitempty"`
	// Windows are the spans of the disruptions that last (stalls, crashes,
	// row locks), with the orders answered during each.
	Windows []Window `json:"windows"`

	windows []window
}

// faultRates are the provider's fault rates: the example (every
// call meets a fault with these probabilities), and the shares of confirms
// answered requires_action and processing (Config), processing intents
// moving on after Config.ProcessingFor.
func (c Config) faultRates() string {
	return fmt.Sprintf(`{"delay_ms":0,"fail":"none","processing_ms":%d,"rates":{"after_charge":0.1,"timeout":0.05,"before_charge":0.05,"decline":0.02,"requires_action":%g,"processing":%g}}`,
		c.ProcessingFor.Milliseconds(), c.RequiresAction, c.Processing)
}

// windowFaults are the faults a provider without rates is set to, one at a
// time, for short windows.
var windowFaults = []string{"before_charge", "after_charge", "timeout", "decline"}

// lockedRand is a random source several goroutines share.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) float() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

func (l *lockedRand) intN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

// between returns a duration in [lo, hi).
func (l *lockedRand) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(l.float()*float64(hi-lo))
}

// tally is what a run's disruptions did, under the lock they share.
type tally struct {
	mu sync.Mutex
	d  Disruptions
}

// fail records a disruption that could not be made.
func (t *tally) fail(what string, err error) {
	t.count(func(d *Disruptions) { d.Errors = append(d.Errors, what+": "+err.Error()) })
}

// span records that a disruption of kind lasted from from until now.
func (t *tally) span(kind string, from time.Time) {
	t.count(func(d *Disruptions) { d.windows = append(d.windows, window{kind: kind, from: from, to: time.Now()}) })
}

// count changes the counts.
func (t *tally) count(change func(d *Disruptions)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	change(&t.d)
}

// disrupt makes the configured disruptions at random moments of the drive,
// until ctx ends, and reports what it did. It never disrupts every shop at
// once: one always serves, as a load balancer would need.
func (cl *cluster) disrupt(ctx context.Context, r *rand.Rand, logf func(string, ...any)) Disruptions {
	rng := &lockedRand{r: r}
	var (
		t    tally
		mu   sync.Mutex       // guards busy
		busy = map[int]bool{} // shops being killed or paused
		wg   sync.WaitGroup
	)
	// tryPick reserves a shop no other disruption holds, or returns -1.
	tryPick := func() int {
		mu.Lock()
		defer mu.Unlock()
		var free []int
		for i, p := range cl.shops {
			if !busy[i] && p.running() {
				free = append(free, i)
			}
		}
		if len(free) < 2 {
			return -1
		}
		i := free[rng.intN(len(free))]
		busy[i] = true
		return i
	}
	// pick waits for a shop to reserve until the drive ends (-1).
	pick := func() int {
		for {
			if i := tryPick(); i >= 0 || ctx.Err() != nil {
				return i
			}
			sleep(ctx, 200*time.Millisecond)
		}
	}
	release := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		delete(busy, i)
	}
	// after runs do after wait, unless the drive ends first.
	after := func(wait time.Duration, do func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(wait):
				do()
			case <-ctx.Done():
			}
		}()
	}
	// at runs do n times, at random moments between 10% and 80% of the drive.
	at := func(n int, do func()) {
		for range n {
			after(rng.between(cl.cfg.Duration/10, cl.cfg.Duration*8/10), do)
		}
	}

	at(cl.cfg.Kills, func() {
		i := pick()
		if i < 0 {
			return
		}
		defer release(i)
		p := cl.shops[i]
		logf("kill -9 %s", p.name)
		p.kill()
		t.count(func(d *Disruptions) { d.Kills++ })
		time.Sleep(rng.between(300*time.Millisecond, 1500*time.Millisecond))
		// A shop refuses to start while PostgreSQL is down (a crash may be
		// under way): try again, as a supervisor would.
		for try := 1; ; try++ {
			err := p.start(ctx)
			if err == nil {
				logf("%s restarted", p.name)
				return
			}
			if ctx.Err() != nil {
				return // heal starts it
			}
			if try == 5 {
				t.fail("restart "+p.name, err)
				return
			}
			sleep(ctx, time.Second)
		}
	})
	shopStall := func() {
		i := pick()
		if i < 0 {
			return
		}
		defer release(i)
		p := cl.shops[i]
		stall := cl.cfg.stall()
		logf("SIGSTOP %s for %s", p.name, stall)
		if err := p.pause(); err != nil {
			t.fail("pause "+p.name, err)
			return
		}
		t.count(func(d *Disruptions) { d.Stalls++ })
		began := time.Now()
		// Resumed even when the drive ends meanwhile: the stalled
		// attempts landing late are the point.
		time.Sleep(stall)
		logf("SIGCONT %s", p.name)
		if err := p.resume(); err != nil {
			t.fail("resume "+p.name, err)
		}
		t.span(windowShopStall, began)
	}
	lossy := func() { cl.lossyOnce(ctx, pick, release, rng, &t, logf) }
	cl.planLastingOnes(ctx, rng, after, &t, logf, shopStall, lossy)

	faults := "off"
	if cl.cfg.ProviderFaults == "rates" || cl.cfg.ProviderFaults == "windows" {
		faults = cl.provideFaults(ctx, rng, &wg, &t, logf)
	}
	wg.Wait()
	t.d.ProviderFaults = faults
	return t.d
}

// planLastingOnes schedules the disruptions that last (shop SIGSTOPs,
// made by shopStall; PostgreSQL stalls and crashes, row locks, SMTP
// stalls) with after, each over by 80% of the drive where the drive is
// long enough: the outbox's recovery from an outage of the database runs
// on River's 30 s rescuer, and its wait (outboxSettle) starts after the
// drain. SMTP stalls are placed clear of the disruptions that slow orders
// by themselves where they fit (planLasting), so that what orders meet
// there is the SMTP stall.
func (cl *cluster) planLastingOnes(ctx context.Context, rng *lockedRand, after func(time.Duration, func()), t *tally, logf func(string, ...any), shopStall, lossy func()) {
	var spans []lastingSpan
	var runs []func()
	add := func(n int, hold time.Duration, role spanRole, do func()) {
		for range n {
			spans = append(spans, lastingSpan{hold: hold, role: role})
			runs = append(runs, do)
		}
	}
	add(cl.cfg.Stalls, cl.cfg.stall(), roleDisturbs, shopStall)
	add(cl.cfg.DBStalls, cl.cfg.DBStall, roleDisturbs, func() { cl.stallPostgresOnce(ctx, t, logf) })
	add(cl.cfg.DBCrashes, crashHold, roleDisturbs, func() { cl.crashPostgresOnce(ctx, rng, t, logf) })
	add(cl.cfg.RowLocks, cl.cfg.RowLock, roleFree, func() { cl.lockKeysOnce(ctx, t, logf) })
	add(cl.cfg.SMTPStalls, cl.cfg.SMTPStall, roleJudged, func() { cl.stallSMTPOnce(rng.intN(2) == 0, t, logf) })
	add(cl.cfg.Partitions, cl.cfg.Partition, roleDisturbs, func() { cl.partitionOnce(ctx, rng, t, logf) })
	add(cl.cfg.LossyLinks, cl.cfg.LinkFor, roleDisturbs, lossy)
	cl.planFailovers(ctx, add, t, logf)
	starts, apart := planLasting(rng, cl.cfg.Duration/10, cl.cfg.Duration*8/10, spans)
	if !apart {
		logf("the SMTP stalls do not fit clear of the other disruptions; some meet one")
	}
	for i, start := range starts {
		after(start, runs[i])
	}
}

// crashHold is what a crash is planned to last: down for up to 2 s, then
// the restart's recovery.
const crashHold = 4 * time.Second

// crashPostgresOnce is one crash of PostgreSQL, recorded in t.
func (cl *cluster) crashPostgresOnce(ctx context.Context, rng *lockedRand, t *tally, logf func(string, ...any)) {
	logf("crash PostgreSQL (pg_ctl stop -m immediate)")
	began, err := cl.crashPostgres(ctx, rng.between(500*time.Millisecond, 2*time.Second))
	switch {
	case errors.Is(err, errDriveOver):
		logf("no crash: %v", err)
	case err != nil:
		t.fail("crash PostgreSQL", err)
	default:
		t.span(windowDBCrash, began)
		logf("PostgreSQL restarted")
		t.count(func(d *Disruptions) { d.DBCrashes++ })
	}
}

// provideFaults turns on the provider's fault rates, or, for a provider
// that does not know rates yet (it refuses the body with 400), runs windows
// of one fault at a time in the background.
func (cl *cluster) provideFaults(ctx context.Context, rng *lockedRand, wg *sync.WaitGroup, t *tally, logf func(string, ...any)) string {
	if cl.cfg.ProviderFaults == "rates" {
		rates := cl.cfg.faultRates()
		status, err := cl.setBehaviour(ctx, rates)
		if err == nil && status == http.StatusOK {
			logf("provider fault rates on: %s", rates)
			return "rates"
		}
		logf("the provider does not take fault rates (status %d, %v); using fault windows", status, err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-time.After(rng.between(time.Second, 3*time.Second)):
			case <-ctx.Done():
				return
			}
			fault := windowFaults[rng.intN(len(windowFaults))]
			body := `{"delay_ms":` + strconv.Itoa(rng.intN(100)) + `,"fail":"` + fault + `"}`
			if _, err := cl.setBehaviour(ctx, body); err != nil {
				continue
			}
			t.count(func(d *Disruptions) { d.FaultWindows++ })
			select {
			case <-time.After(rng.between(200*time.Millisecond, 800*time.Millisecond)):
			case <-ctx.Done():
			}
			cl.setBehaviour(context.WithoutCancel(ctx), `{"delay_ms":0,"fail":"none"}`) //nolint:errcheck // heal sets it again
		}
	}()
	return "windows"
}
