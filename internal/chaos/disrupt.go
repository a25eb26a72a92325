package chaos

import (
	"context"
	"errors"
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
	// ProviderFaults is "rates" (the provider draws a fault per call),
	// "windows" (one fault at a time, for a moment), or "off".
	ProviderFaults string `json:"provider_faults"`
	FaultWindows   int    `json:"fault_windows,omitempty"`
	// Errors are disruptions that could not be made, such as a restart
	// that failed; the settle step restarts what is down.
	Errors []string `json:"errors,omitempty"`
	// Windows are the spans of the disruptions that last (stalls, crashes,
	// row locks), with the orders answered during each.
	Windows []Window `json:"windows"`

	windows []window
}

// faultRates is the example of provider fault rates: every call
// meets a fault with these probabilities.
const faultRates = `{"delay_ms":0,"fail":"none","rates":{"after_charge":0.1,"timeout":0.05,"before_charge":0.05,"decline":0.02}}`

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

// disrupt makes the configured disruptions at random moments of the drive,
// until ctx ends, and reports what it did. It never disrupts every shop at
// once: one always serves, as a load balancer would need.
func (cl *cluster) disrupt(ctx context.Context, r *rand.Rand, logf func(string, ...any)) Disruptions {
	rng := &lockedRand{r: r}
	var (
		mu   sync.Mutex
		d    Disruptions
		busy = map[int]bool{} // shops being killed or paused
		wg   sync.WaitGroup
	)
	fail := func(what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		d.Errors = append(d.Errors, what+": "+err.Error())
	}
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
	// span records that a disruption of kind lasted from from until now.
	span := func(kind string, from time.Time) {
		mu.Lock()
		defer mu.Unlock()
		d.windows = append(d.windows, window{kind: kind, from: from, to: time.Now()})
	}
	release := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		delete(busy, i)
	}
	// at runs do n times, at random moments between 10% and 80% of the drive.
	at := func(n int, do func()) {
		for range n {
			wg.Add(1)
			wait := rng.between(cl.cfg.Duration/10, cl.cfg.Duration*8/10)
			go func() {
				defer wg.Done()
				select {
				case <-time.After(wait):
					do()
				case <-ctx.Done():
				}
			}()
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
		mu.Lock()
		d.Kills++
		mu.Unlock()
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
				fail("restart "+p.name, err)
				return
			}
			sleep(ctx, time.Second)
		}
	})
	at(cl.cfg.Stalls, func() {
		i := pick()
		if i < 0 {
			return
		}
		defer release(i)
		p := cl.shops[i]
		stall := cl.cfg.stall()
		logf("SIGSTOP %s for %s", p.name, stall)
		if err := p.pause(); err != nil {
			fail("pause "+p.name, err)
			return
		}
		mu.Lock()
		d.Stalls++
		mu.Unlock()
		began := time.Now()
		// Resumed even when the drive ends meanwhile: the stalled
		// attempts landing late are the point.
		time.Sleep(stall)
		logf("SIGCONT %s", p.name)
		if err := p.resume(); err != nil {
			fail("resume "+p.name, err)
		}
		span(windowShopStall, began)
	})
	at(cl.cfg.DBCrashes, func() {
		logf("crash PostgreSQL (pg_ctl stop -m immediate)")
		began, err := cl.crashPostgres(ctx, rng.between(500*time.Millisecond, 2*time.Second))
		if errors.Is(err, errDriveOver) {
			logf("no crash: %v", err)
			return
		}
		if err != nil {
			fail("crash PostgreSQL", err)
			return
		}
		span(windowDBCrash, began)
		logf("PostgreSQL restarted")
		mu.Lock()
		d.DBCrashes++
		mu.Unlock()
	})
	at(cl.cfg.DBStalls, func() {
		var began time.Time
		err := cl.stallPostgres(ctx, cl.cfg.DBStall, func(n int) {
			began = time.Now()
			logf("SIGSTOP of PostgreSQL's %d processes for %s", n, cl.cfg.DBStall)
			mu.Lock()
			d.DBStalls++
			mu.Unlock()
		})
		if errors.Is(err, errDriveOver) {
			logf("no PostgreSQL stall: %v", err)
			return
		}
		if err != nil {
			fail("stall PostgreSQL", err)
			return
		}
		span(windowDBStall, began)
		logf("SIGCONT PostgreSQL")
	})
	at(cl.cfg.RowLocks, func() {
		var began time.Time
		err := cl.lockKeys(ctx, cl.cfg.RowLockKeys, cl.cfg.RowLock, func(keys, started int) {
			began = time.Now()
			logf("row locks of %d keys (%d started) held for %s", keys, started, cl.cfg.RowLock)
			mu.Lock()
			d.RowLocks++
			d.KeysLocked += keys
			d.StartedKeysLocked += started
			mu.Unlock()
		})
		if err != nil {
			fail("lock keys", err)
			return
		}
		span(windowRowLock, began)
		logf("row locks released")
	})
	at(cl.cfg.SMTPStalls, func() {
		// Half the stalls greet first: a sender then waits for the answer
		// to its EHLO, not for the greeting, which some clients time
		// differently.
		greet := rng.intN(2) == 0
		logf("SMTP stall for %s (greeting passed: %v)", cl.cfg.SMTPStall, greet)
		began := time.Now()
		cl.smtp.stall(greet)
		// Resumed even when the drive ends meanwhile, as a stall is.
		time.Sleep(cl.cfg.SMTPStall)
		cl.smtp.resume()
		span(windowSMTPStall, began)
		logf("SMTP flows again")
		mu.Lock()
		d.SMTPStalls++
		mu.Unlock()
	})

	d.ProviderFaults = "off"
	if cl.cfg.ProviderFaults == "rates" || cl.cfg.ProviderFaults == "windows" {
		d.ProviderFaults = cl.provideFaults(ctx, rng, &wg, &mu, &d, logf)
	}
	wg.Wait()
	return d
}

// provideFaults turns on the provider's fault rates, or, for a provider
// that does not know rates yet (it refuses the body with 400), runs windows
// of one fault at a time in the background.
func (cl *cluster) provideFaults(ctx context.Context, rng *lockedRand, wg *sync.WaitGroup, mu *sync.Mutex, d *Disruptions, logf func(string, ...any)) string {
	if cl.cfg.ProviderFaults == "rates" {
		status, err := cl.setBehaviour(ctx, faultRates)
		if err == nil && status == http.StatusOK {
			logf("provider fault rates on: %s", faultRates)
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
			mu.Lock()
			d.FaultWindows++
			mu.Unlock()
			select {
			case <-time.After(rng.between(200*time.Millisecond, 800*time.Millisecond)):
			case <-ctx.Done():
			}
			cl.setBehaviour(context.WithoutCancel(ctx), `{"delay_ms":0,"fail":"none"}`) //nolint:errcheck // heal sets it again
		}
	}()
	return "windows"
}
