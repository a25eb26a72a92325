package chaos

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"exactlyonce/bench/chaos/chaosdb"
	"exactlyonce/bench/hapg"
	"exactlyonce/bench/haproxy"
	"exactlyonce/internal/catalog"
	"exactlyonce/internal/database"
	"exactlyonce/internal/outbox"
	"exactlyonce/localpg"
	"exactlyonce/mailcatcher"
)

// cluster is everything a run starts: the shop's PostgreSQL, the
// provider with a PostgreSQL of its own, the shops.
type cluster struct {
	cfg    Config
	dir    string
	pgOpts localpg.Options
	pg     *localpg.Server
	pgMu   sync.Mutex // held while PostgreSQL is crashed and restarted
	// ha is the shop's database in a failover run, instead of pg; haMu is
	// held while it is disrupted. front is HAProxy, the clients' one
	// address, in front of the shops.
	ha    *hapg.Formation
	haMu  sync.Mutex
	front *haproxy.Proxy
	db    *database.DB
	// The provider keeps its charges on a server of its own, which no
	// disruption touches: as a real provider's, its state is not rolled
	// back with the shop's (a crash, a failover), so a charge the shop
	// lost track of stays visible to the checks.
	providerPG *localpg.Server
	providerDB *database.DB
	provider   *process
	secret     string
	// webhooks is the run's webhook faults as the provider's behaviour
	// spells them, carried by every behaviour the run sets (setBehaviour).
	webhooks map[string]any
	shops    []*process
	// admins are the shops' admin listeners (ADMIN_ADDR), in the order of
	// shops, and adminToken their operator credential (ADMIN_TOKEN): the
	// operator clients' refunds go there (refunds.go).
	admins     []string
	adminToken string
	// refundFaults are the provider's refund faults (Config.Refunds),
	// carried by the drive's fault rates only (setBehaviour).
	refundFaults map[string]any
	// targets are the addresses the clients send to: HAProxy's, or every
	// shop's, one picked per request as a load balancer would.
	targets   []string
	removeDir bool
	// mail is the SMTP server the shops' confirmations end up in; smtp is
	// the proxy they are sent through, which the SMTP stalls stall.
	mail *mailcatcher.Server
	smtp *smtpProxy
	// net is the run's network with Config.Net (netns.go): a namespace
	// per shop (spaces, in the order of shops) and the provider's; the
	// forwarders that bring PostgreSQL and the mail server onto the
	// bridge; front0, the address the provider's webhooks go to.
	net           *netLab
	spaces        []*netSpace
	providerSpace *netSpace
	forwarders    []*forwarder
	front0        string
}

func startCluster(ctx context.Context, cfg Config, dir string, logf func(string, ...any)) (_ *cluster, err error) {
	cl := &cluster{cfg: cfg, dir: dir, secret: "sk_chaos_" + rand.Text(), adminToken: rand.Text() + rand.Text()}
	defer func() {
		if err != nil {
			cl.stop()
		}
	}()
	// As root, PostgreSQL runs as the user postgres, which must be able to
	// enter the folder its cluster is in.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	url, err := cl.startShopDatabase(ctx, logf)
	if err != nil {
		return nil, err
	}
	if cl.db, err = openMigrated(ctx, url); err != nil {
		return nil, err
	}
	if cl.providerPG, err = localpg.Start(ctx, localpg.Options{DataDir: filepath.Join(dir, "provider-pg"), Throwaway: true, CrashSafe: true}); err != nil {
		return nil, err
	}
	providerURL := cl.providerPG.URL("postgres")
	pool, err := database.Open(ctx, providerURL)
	if err != nil {
		return nil, err
	}
	cl.providerDB = database.New(pool)
	logf("the provider's PostgreSQL ready in %s", filepath.Join(dir, "provider-pg"))
	if cl.mail, err = mailcatcher.Listen("127.0.0.1:0"); err != nil {
		return nil, err
	}
	if cl.smtp, err = listenSMTPProxy(cl.mail.Addr()); err != nil {
		return nil, err
	}
	smtpAddr, shopURL := cl.smtp.Addr(), url
	if cfg.Net {
		if smtpAddr, shopURL, err = cl.startNet(url, logf); err != nil {
			return nil, err
		}
	}

	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"STRIPE_SECRET_KEY=" + cl.secret,
		// The provider signs its webhooks with it, the shops verify them.
		"STRIPE_WEBHOOK_SECRET=whsec_" + rand.Text(),
		"SESSION_SECRET=" + rand.Text() + rand.Text(),
		"LOCK_TIMEOUT=" + cfg.LockTimeout.String(),
		"PROVIDER_TIMEOUT=" + cfg.ProviderTimeout.String(),
		"COMPLETER_GRACE=" + cfg.CompleterGrace.String(),
		"AUTHENTICATION_WINDOW=" + cfg.AuthenticationWindow.String(),
		"COMPLETER_INTERVAL=" + cfg.CompleterInterval.String(),
		// Read by a shop that has the reconciler, ignored by one without.
		"RECONCILE_INTERVAL=" + cfg.CompleterInterval.String(),
		"SHUTDOWN_TIMEOUT=2s",
		// The outbox's jobs run in the shops; a job a kill -9 left running
		// is delivered again once River's rescuer sees it (outboxSettle).
		"SMTP_ADDR=" + smtpAddr,
		"JOB_RESCUE_AFTER=" + jobRescueAfter.String(),
		// The operator's credential: the operator clients refund orders
		// on the admin listeners (refunds.go).
		"ADMIN_TOKEN=" + cl.adminToken,
		"LOG_FORMAT=json",
		"LOG_LEVEL=warn",
		// All the harness's clients send from loopback, far faster than a
		// person: the write limits are lifted, as the load test does.
		"WRITES_PER_MINUTE=1000000", "WRITE_BURST=1000000", "ADDRESS_WRITES_PER_MINUTE=1000000",
		"ADDRESS_WRITE_BURST=1000000", "DECLINES_PER_HOUR=1000000", "DECLINE_BURST=1000000", "WRITES_IN_FLIGHT=10000", "ADDRESS_WRITES_IN_FLIGHT=10000",
	}
	if v := os.Getenv("PG_BIN"); v != "" {
		env = append(env, "PG_BIN="+v)
	}

	// Every address first: the provider sends its webhooks to the shops'
	// front door, as Stripe does to a shop's public address: HAProxy in a
	// failover run, else the first shop (while it is down, the provider
	// retries, and the reconciler is the safety net for what never
	// arrives).
	addrs := make([]string, cfg.Instances)
	cl.admins = make([]string, cfg.Instances)
	for i := range addrs {
		if addrs[i], err = freeAddr(); err != nil {
			return nil, err
		}
		if cl.admins[i], err = freeAddr(); err != nil {
			return nil, err
		}
		if cfg.Net {
			// In its namespace a shop has the ports to itself; the
			// harness reaches both listeners over the bridge.
			addrs[i] = cl.net.shopIP(i) + ":" + strconv.Itoa(shopPort)
			cl.admins[i] = cl.net.shopIP(i) + ":" + strconv.Itoa(shopPort+1)
		}
	}
	front := addrs[0]
	if cfg.HA {
		if front, err = freeAddr(); err != nil {
			return nil, err
		}
		if cfg.Net {
			if front, err = freeAddrOn(cl.net.gateway()); err != nil {
				return nil, err
			}
		}
	}
	cl.front0 = front

	// The fake Stripe on its own database: it applies its own migrations
	// there before it serves. Never the memory store (FAKE_PROVIDER_STORE,
	// the load test's): the run holds the shop's orders against the fake's
	// books (ledger.go), read from that database.
	paddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if cfg.Net {
		paddr = cl.net.providerIP() + ":" + strconv.Itoa(shopPort)
	}
	cl.provider = &process{
		name: "provider", addr: paddr, args: cl.inSpace(cl.providerSpace, cfg.Fake),
		env: slices.Concat(env, []string{"PROVIDER_ADDR=" + paddr, "FAKE_PROVIDER_STORE=postgres", "DATABASE_URL=" + providerURL,
			"STRIPE_WEBHOOK_URL=http://" + front + "/webhooks/stripe"}),
		logPath: filepath.Join(dir, "provider.log"),
		// Without the secret key this answers 401, which proves it serves.
		ready: "/v1/payment_intents/pi_none", anyAnswer: true,
	}
	if err := cl.provider.start(ctx); err != nil {
		return nil, err
	}
	logf("provider ready on %s, its webhooks to %s", paddr, front)
	cl.webhooks = map[string]any{"duplicate": cfg.WebhookDuplicates, "reorder": cfg.WebhookReorder,
		"delay_ms": cfg.WebhookDelay.Milliseconds()}
	cl.refundFaults = refundFaults(cfg)
	if status, err := cl.setBehaviour(ctx, `{"delay_ms":0,"fail":"none"}`); err != nil || status != http.StatusOK {
		return nil, fmt.Errorf("the provider's webhook faults: status %d, %v", status, err)
	}

	shopEnv := slices.Concat(env, []string{"DATABASE_URL=" + shopURL, "STRIPE_API_BASE=http://" + paddr, "DEMO=0"})
	if cfg.HA {
		// The shops answer for HAProxy's address, which the clients, its
		// health checks and the provider's webhooks name in their Host
		// header.
		shopEnv = append(shopEnv, "ALLOWED_HOSTS="+front)
		if !cfg.Async {
			// The configuration a synchronous standby is run with: no key
			// is written while the primary commits alone
			// (pg_auto_failover's wait_primary), which its own switchover
			// can do for a moment (docs/ha.md).
			shopEnv = append(shopEnv, "REQUIRE_SYNC_REPLICA=1")
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, cfg.Instances)
	for i, addr := range addrs {
		p := &process{
			name: "web-" + strconv.Itoa(i), addr: addr, args: cl.inSpace(cl.shopSpace(i), cfg.Web),
			env:     slices.Concat(shopEnv, []string{"ADDR=" + addr, "ADMIN_ADDR=" + cl.admins[i]}, cfg.skewEnv(i)),
			logPath: filepath.Join(dir, "web-"+strconv.Itoa(i)+".log"), ready: "/readyz",
		}
		cl.shops = append(cl.shops, p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.start(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	logf("%d shop instances ready", cfg.Instances)
	cl.targets = addrs
	if cfg.HA {
		if err := cl.startFront(ctx, front, addrs, logf); err != nil {
			return nil, err
		}
		cl.targets = []string{cl.front.Addr()}
	}
	return cl, nil
}

// heard says whether the shop listening on addr could hear a request sent
// at from and given up on at to (process.heard). Through HAProxy the shop
// is not known: only an answer shows that one heard.
func (cl *cluster) heard(addr string, from, to time.Time) bool {
	for _, p := range cl.shops {
		if p.addr == addr {
			return p.heard(from, to)
		}
	}
	return false
}

// heardFrom returns when the shop listening on addr could first hear a
// request sent at sent (process.heardFrom); through HAProxy, sent.
func (cl *cluster) heardFrom(addr string, sent time.Time) time.Time {
	for _, p := range cl.shops {
		if p.addr == addr {
			return p.heardFrom(sent)
		}
	}
	return sent
}

// startShopDatabase starts the shop's PostgreSQL, or its formation in a
// failover run, and returns its URL.
func (cl *cluster) startShopDatabase(ctx context.Context, logf func(string, ...any)) (string, error) {
	if cl.cfg.HA {
		return cl.startFormation(ctx, logf)
	}
	// Crash-safe, because a crash must lose nothing committed, as on a
	// production server; throwaway, so it goes when the harness does.
	cl.pgOpts = localpg.Options{DataDir: filepath.Join(cl.dir, "pg"), Throwaway: true, CrashSafe: true}
	var err error
	if cl.pg, err = localpg.Start(ctx, cl.pgOpts); err != nil {
		return "", err
	}
	logf("PostgreSQL ready in %s", cl.pgOpts.DataDir)
	return cl.pg.URL("postgres"), nil
}

// setBehaviour sets the provider's behaviour through its demo control,
// with the run's webhook faults and its provider latency added to body, so
// that a fault window or the heal does not switch them off. It returns the provider's status, so
// a caller can tell a body the provider does not know (400) from a failure.
func (cl *cluster) setBehaviour(ctx context.Context, body string) (int, error) {
	var b map[string]any
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		return 0, fmt.Errorf("behaviour %s: %w", body, err)
	}
	b["webhooks"] = cl.webhooks
	if _, drive := b["rates"]; drive && cl.refundFaults != nil {
		b["refunds"] = cl.refundFaults
	}
	if d := cl.cfg.ProviderDelay; d > 0 {
		// The run's latency comes on top of a fault window's own delay.
		ms, _ := b["delay_ms"].(float64)
		b["delay_ms"] = int64(ms) + d.Milliseconds()
	}
	full, err := json.Marshal(b)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+cl.provider.addr+"/provider/demo/behaviour", bytes.NewReader(full))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+cl.secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // drained for the status only
	return resp.StatusCode, nil
}

// product is what clients put into carts.
type product struct {
	SKU   string `json:"sku"`
	Price int64  `json:"price"`
}

// products reads the catalog through the first shop's API.
func (cl *cluster) products(ctx context.Context) ([]product, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+cl.shops[0].addr+"/api/products", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var ps []product
	if err := json.NewDecoder(resp.Body).Decode(&ps); err != nil || len(ps) == 0 {
		return nil, fmt.Errorf("read catalog: got %d products, error %v", len(ps), err)
	}
	return ps, nil
}

// errDriveOver is a disruption of PostgreSQL that waited for another to
// end until the drive was over, and so was not made.
var errDriveOver = errors.New("the drive ended first")

// crashPostgres stops PostgreSQL as a power cut would and starts it again
// after down. It returns when the crash began: it waits for a stall of
// PostgreSQL to end first.
func (cl *cluster) crashPostgres(ctx context.Context, down time.Duration) (time.Time, error) {
	cl.pgMu.Lock()
	defer cl.pgMu.Unlock()
	began := time.Now()
	if ctx.Err() != nil {
		return began, errDriveOver
	}
	if err := cl.pg.Crash(ctx); err != nil {
		return began, err
	}
	select {
	case <-time.After(down):
	case <-ctx.Done():
	}
	// Not ctx: a server left down would fail the settling too.
	_, err := localpg.Start(context.WithoutCancel(ctx), cl.pgOpts)
	return began, err
}

// heal undoes every disruption: PostgreSQL up, every shop running and
// resumed, the provider healthy.
func (cl *cluster) heal(ctx context.Context) error {
	cl.healNet()
	if err := cl.healDatabase(ctx); err != nil {
		return err
	}
	for _, p := range cl.shops {
		if p.running() {
			p.resume() //nolint:errcheck // it was running a moment ago: the only error is that it exited since
			continue
		}
		if err := p.start(ctx); err != nil {
			return err
		}
	}
	if _, err := cl.setBehaviour(ctx, `{"delay_ms":0,"fail":"none"}`); err != nil {
		return err
	}
	cl.smtp.resumeAll()
	return nil
}

// healDatabase starts the shop's PostgreSQL, or every node of its
// formation, again.
func (cl *cluster) healDatabase(ctx context.Context) error {
	if cl.ha != nil {
		return cl.healFormation(ctx)
	}
	cl.pgMu.Lock()
	defer cl.pgMu.Unlock()
	_, err := localpg.Start(ctx, cl.pgOpts)
	return err
}

// settle waits until no key is left started and the reconciler has
// refunded every charge without an order, for up to limit, and returns how
// long that took and how many keys are still started.
func (cl *cluster) settle(ctx context.Context, limit time.Duration) (seconds float64, started int64) {
	d := chaosdb.New(cl.db.Conn())
	seconds = poll(ctx, limit, func() bool {
		n, err := d.ChaosStartedKeys(ctx)
		if err != nil {
			return false
		}
		started = n
		b, err := readBooks(ctx, cl.db, cl.providerDB)
		return err == nil && n == 0 && len(b.chargesWithoutOrder()) == 0
	})
	return seconds, started
}

// The outbox's recovery runs on River's schedule, not the completer's: a
// job whose worker was killed or paused stays running until River's
// rescuer, which runs every 30 s on the leader (outbox.RescuerInterval),
// finds it older than JOB_RESCUE_AFTER; it is then
// worked again a second later, and a second error (its retry met the
// paused worker's lock, or a database still starting) puts the next try
// 16 s later. outboxSettle covers that sequence with a margin; a run
// waits that long only while jobs are left.
const (
	jobRescueAfter = 4 * time.Second
	outboxSettle   = jobRescueAfter + outbox.RescuerInterval + time.Second + 16*time.Second + 5*time.Second
)

// settleJobs waits until every outbox job has finished, for up to limit,
// and returns how long that took and how many are left.
func (cl *cluster) settleJobs(ctx context.Context, limit time.Duration) (seconds float64, left int64) {
	seconds = poll(ctx, limit, func() bool {
		left = cl.jobsLeft(ctx)
		return left == 0
	})
	return seconds, left
}

// poll asks done every 250 ms until it says yes, limit has passed or ctx
// ends, and returns how long that took.
func poll(ctx context.Context, limit time.Duration, done func() bool) (seconds float64) {
	began := time.Now()
	for !done() && time.Since(began) <= limit && ctx.Err() == nil {
		time.Sleep(250 * time.Millisecond)
	}
	return time.Since(began).Seconds()
}

// jobsLeft is how many outbox jobs are not finished, or -1 when the
// database cannot say.
func (cl *cluster) jobsLeft(ctx context.Context) int64 {
	n, err := chaosdb.New(cl.db.Conn()).ChaosJobsLeft(ctx)
	if err != nil {
		return -1
	}
	return n
}

// stop ends every process and the server, and deletes the run's folder
// when asked to.
func (cl *cluster) stop() {
	if cl.front != nil {
		cl.front.Stop()
	}
	for _, p := range cl.shops {
		p.terminate(3 * time.Second)
	}
	if cl.provider != nil {
		cl.provider.terminate(3 * time.Second)
	}
	for _, d := range []*database.DB{cl.db, cl.providerDB} {
		if d != nil {
			d.Pool.Close()
		}
	}
	for _, pg := range []*localpg.Server{cl.pg, cl.providerPG} {
		if pg != nil {
			pg.Stop(context.Background()) // the watchdog stops it too
		}
	}
	if cl.ha != nil {
		cl.ha.Stop(context.Background()) // the watchdog stops it too
	}
	if cl.smtp != nil {
		cl.smtp.Close()
	}
	if cl.mail != nil {
		cl.mail.Close()
	}
	for _, f := range cl.forwarders {
		f.close()
	}
	if cl.net != nil {
		cl.net.close()
	}
	if cl.removeDir {
		os.RemoveAll(cl.dir)
	}
}

// openMigrated connects to the shop's database, applies the migrations and
// seeds the catalog, as the first shop would, so that the shops start on a
// ready database.
func openMigrated(ctx context.Context, url string) (*database.DB, error) {
	pool, err := database.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := database.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	d := database.New(pool)
	if err := catalog.Seed(ctx, d.Queries); err != nil {
		pool.Close()
		return nil, err
	}
	return d, nil
}
