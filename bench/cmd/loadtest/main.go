// Command loadtest is `make loadtest`: it starts a throwaway PostgreSQL (and,
// with -pgbouncer, PgBouncer in transaction pooling in front of it) and the
// shop's binary with the demo provider, then measures side by side, at one
// client count:
//
//   - pgbench running the shop's own statements of one new order, and the
//     seed's five-round-trip shape;
//   - POST /api/orders with a fresh key each (new orders), first with the
//     jobs each order enqueues left for after the leg, then with `web
//     worker` doing them during the leg;
//   - pgbench running a point select by primary key;
//   - POST /api/orders resending one placed order's key (replays), and the
//     same request to a bare net/http server (the floor);
//   - GET /checkout of a shopper with a cart;
//
// and prints a table of rates, ratios, p50/p99 latencies and the web
// process's CPU per request. Everything listens on loopback; every leg is
// bounded in time (and optionally in count). The machine is shared, so only
// ratios within one run mean anything.
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"exactlyonce/bench/loadtest"
	"exactlyonce/bench/pgbouncer"
	"exactlyonce/fakestripe"
	"exactlyonce/localpg"
	"exactlyonce/mailcatcher"
)

type flags struct {
	web        string
	fake       string
	fakeStore  string
	clients    int
	duration   time.Duration
	max        int
	bouncer    bool
	profileDir string
	logFile    string
	poolSizes  string
	growth     string
	sweep      string
	floor      string
	sweepBy    string
	// The order floor's, with -serve-floor: where its round trips, its
	// provider calls and its mail go.
	floorDB, floorProvider, floorSMTP string
}

func main() {
	var f flags
	flag.StringVar(&f.web, "web", "bin/web", "the shop's binary (go build -o bin/web ./cmd/web)")
	flag.StringVar(&f.fake, "fake", "bin/fakestripe", "the fake Stripe's binary (make bin/fakestripe)")
	flag.StringVar(&f.fakeStore, "fake-store", "memory", "where the fake Stripe keeps its state (FAKE_PROVIDER_STORE): memory, so that its work is not counted as the shop's (at Stripe it costs the shop nothing), or postgres, on a database of its own on the load test's server, as `make run` and the chaos runs keep it")
	flag.IntVar(&f.clients, "clients", 16, "concurrent clients, the same for every leg")
	flag.DurationVar(&f.duration, "duration", 5*time.Second, "length of each leg (whole seconds for pgbench)")
	flag.IntVar(&f.max, "max", 0, "stop each leg after this many requests too (0: time only)")
	flag.BoolVar(&f.bouncer, "pgbouncer", false, "put PgBouncer (transaction pooling) between the shop, pgbench and PostgreSQL")
	flag.StringVar(&f.profileDir, "profile", "", "save CPU profiles of the web process during the new-order and replay legs here")
	flag.StringVar(&f.logFile, "log", "", "the web process's log (default: discarded into a temporary file)")
	flag.StringVar(&f.poolSizes, "pool-sizes", "", "comma-separated DB_MAX_CONNS values: the HTTP legs run once per value, each on a fresh shop process (default: DB_MAX_CONNS from the environment, or pgx's default)")
	flag.StringVar(&f.growth, "growth", "", "after the legs, measure the claim alone at these key-table sizes, bulk-seeded (such as 10k,1m)")
	flag.StringVar(&f.sweep, "sweep", "", "after the legs, measure the claim while `web sweep` deletes this many bulk-seeded expired keys (such as 1m)")
	flag.StringVar(&f.floor, "serve-floor", "", "serve the floor (a bare net/http replay) on this address and do nothing else; the load test runs itself so")
	flag.StringVar(&f.floorDB, "floor-db", "", "with -serve-floor: serve the order floor (POST /order), its round trips to this PostgreSQL")
	flag.StringVar(&f.floorProvider, "floor-provider", "", "with -floor-db: the bare server standing for the provider, http://host:port")
	flag.StringVar(&f.floorSMTP, "floor-smtp", "", "with -floor-db: the mail catcher's host:port")
	flag.StringVar(&f.sweepBy, "sweep-by", "delete,partition", "with -sweep, the retention legs, side by side: delete (`web sweep`'s batched deletes), partition (the keys in a day's partition of a partitioned stand-in table, detached CONCURRENTLY and dropped), partition-plain (the same with a plain DETACH)")
	flag.Parse()
	if f.floor != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err := serveFloor(ctx, f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
		return
	}
	if f.clients < 1 || f.clients > 256 || f.duration <= 0 || f.duration > 10*time.Minute {
		fmt.Fprintln(os.Stderr, "loadtest: -clients from 1 to 256, -duration up to 10m")
		os.Exit(2)
	}
	if f.fakeStore != "memory" && f.fakeStore != "postgres" {
		fmt.Fprintln(os.Stderr, "loadtest: -fake-store is memory or postgres")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, f); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, f flags) error {
	say := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "loadtest: "+format+"\n", args...) }
	dir, err := os.MkdirTemp("/tmp", "loadtest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	srv, err := localpg.Start(ctx, localpg.Options{DataDir: filepath.Join(dir, "pg"), Throwaway: true,
		Settings: loadtest.StatementsSettings})
	if err != nil {
		return err
	}
	defer srv.Stop(context.Background())
	direct := srv.URL("postgres")
	shopURL, mode := direct, "prepared"
	pgEnv, err := libpqEnv(direct)
	if err != nil {
		return err
	}
	if f.bouncer {
		b, err := pgbouncer.Start(ctx, direct, pgbouncer.Options{})
		if err != nil {
			return err
		}
		defer b.Stop()
		shopURL, mode = b.URL("postgres"), "extended"
		pgEnv = []string{"PGHOST=127.0.0.1", "PGPORT=" + strconv.Itoa(b.Port()), "PGUSER=postgres", "PGDATABASE=postgres"}
		say("PgBouncer (transaction pooling) on 127.0.0.1:%d; the shop uses DB_QUERY_MODE=cache_describe, pgbench -M extended", b.Port())
	}

	sizes := strings.Split(f.poolSizes, ",")
	if f.poolSizes == "" {
		sizes = []string{os.Getenv("DB_MAX_CONNS")}
	}
	web, shop, err := startShop(ctx, f, dir, shopURL, direct, sizes[0], func(w *webProc) {
		say("shop at %s (pid %d), admin at %s, DB_MAX_CONNS=%s", w.base, w.cmd.Process.Pid, w.admin, orDefault(sizes[0]))
	})
	if err != nil {
		return err
	}
	defer func() { web.stop() }()
	cust, token, replayKey := shop.Customer(0)
	sum := sha256.Sum256([]byte(token))
	pgb := loadtest.Pgbench{Env: pgEnv, Mode: mode, Dir: dir}
	opts := loadtest.Options{Clients: f.clients, Duration: f.duration, Max: f.max}
	// The pgbench scripts of an order run the fake's two transactions only
	// where the fake runs them: on PostgreSQL, with -fake-store=postgres.
	orderDefs := map[string]string{"cust": cust, "tokenhash": hex.EncodeToString(sum[:]), "fakedb": fakeDB(f)}

	load0 := loadavg()
	say("pgbench: the minimal pattern of an exactly-once order (three autocommits)")
	if err := createMinimal(ctx, direct); err != nil {
		return err
	}
	pgMin, err := pgb.Run(ctx, "pgbench: minimal pattern (claim, charge, fenced finish + order)", "minimal.sql", opts, orderDefs)
	if err != nil {
		return err
	}
	say("pgbench: the shop's statements of a new order")
	if err := fakeSchema(ctx, direct); err != nil {
		return err
	}
	pgNew, err := pgb.Run(ctx, "pgbench: new order (app's statements)", "neworder.sql", opts, orderDefs)
	if err != nil {
		return err
	}
	// The order path alone: the shop runs no job workers (RUN_JOBS=0), so
	// the jobs each order enqueues wait for `web worker`, started after.
	say("HTTP: new orders, their jobs left for after the leg")
	appNew, err := web.measure(ctx, f, "neworders", func() loadtest.Result {
		return loadtest.Run(ctx, "app: new orders (POST, fresh key)", opts, shop.NewOrder)
	})
	if err != nil {
		return err
	}
	worker, err := startWorker(ctx, f, dir, shopURL, web.smtp)
	if err != nil {
		return err
	}
	defer func() { worker.stop() }()
	drained, left, err := waitJobs(ctx, direct, 2*time.Minute)
	if err != nil {
		return err
	}
	jobs := 2 * appNew.N // a loyalty award and a mail per order
	say("web worker did the %d jobs of the leg's orders (loyalty points, mail) in %v (%.0f jobs/s); %d left",
		jobs, drained.Round(100*time.Millisecond), float64(jobs)/drained.Seconds(), left)
	// The order and what it triggers: `web worker` consumes during the leg.
	say("HTTP: new orders, web worker consuming their jobs during the leg")
	workerCPU0, err := loadtest.ProcessCPU(worker.cmd.Process.Pid)
	if err != nil {
		return err
	}
	appNewJobs, err := web.measure(ctx, f, "", func() loadtest.Result {
		return loadtest.Run(ctx, "app: new orders + their jobs by web worker (web + worker CPU)", opts, shop.NewOrder)
	})
	if err != nil {
		return err
	}
	drained, left, err = waitJobs(ctx, direct, 2*time.Minute)
	if err != nil {
		return err
	}
	// The worker's CPU counts until the leg's last jobs are done.
	workerCPU1, err := loadtest.ProcessCPU(worker.cmd.Process.Pid)
	if err != nil {
		return err
	}
	appNewJobs.CPU += workerCPU1 - workerCPU0
	say("their jobs done %v after the leg; %d left", drained.Round(100*time.Millisecond), left)
	say("pgbench: the seed's five round trips")
	pgSeed, err := pgb.Run(ctx, "pgbench: seed's 5-round-trip order", "seed.sql", opts, orderDefs)
	if err != nil {
		return err
	}
	say("pgbench: point select")
	pgPoint, err := pgb.Run(ctx, "pgbench: point select by primary key", "pointselect.sql", opts,
		map[string]string{"cust": cust, "key": replayKey})
	if err != nil {
		return err
	}
	say("HTTP: replays")
	appReplay, err := web.measure(ctx, f, "replays", func() loadtest.Result {
		return loadtest.Run(ctx, "app: replays (POST, same key)", opts, shop.Replay)
	})
	if err != nil {
		return err
	}
	say("HTTP: the floor, a bare net/http server answering the same replay")
	floor, err := startFloor(ctx, dir, "floor")
	if err != nil {
		return err
	}
	floorReplay, err := shop.ReplayAt(floor.base)
	if err != nil {
		return err
	}
	bare, err := floor.measure(ctx, f, "", func() loadtest.Result {
		return loadtest.Run(ctx, "floor: bare net/http replay (no router, log, lookup)", opts, floorReplay)
	})
	floor.stop()
	if err != nil {
		return err
	}
	say("HTTP: checkout page")
	appPage, err := web.measure(ctx, f, "", func() loadtest.Result {
		return loadtest.Run(ctx, "app: checkout page (GET /checkout)", opts, shop.CheckoutPage)
	})
	if err != nil {
		return err
	}

	// The shop as `make run` ships it: the outbox's consumers in the web
	// process (RUN_JOBS=1), no web worker. A fresh process on the same
	// database, so that nothing of the legs above (a worker, a warm cache
	// of remembered answers) helps it.
	worker.stop()
	web.stop()
	dweb, dshop, err := startShop(ctx, f, dir, shopURL, direct, sizes[0], func(w *webProc) {
		say("the shop as shipped (RUN_JOBS=1) at %s (pid %d)", w.base, w.cmd.Process.Pid)
	}, "RUN_JOBS=1")
	if err != nil {
		return err
	}
	defer func() { dweb.stop() }()
	say("HTTP: new orders, the shop as shipped (its jobs in the web process)")
	counter, err := pgx.Connect(ctx, direct)
	if err != nil {
		return err
	}
	defer counter.Close(context.Background())
	if err := loadtest.ResetStatements(ctx, counter); err != nil {
		return err
	}
	defNew, err := dweb.measure(ctx, f, "neworders-defaults", func() loadtest.Result {
		return loadtest.Run(ctx, "app as shipped: new orders (POST, fresh key; jobs in the web process)", opts, dshop.NewOrder)
	})
	if err != nil {
		return err
	}
	// What each order cost the database, its jobs included: counted once
	// the jobs of the leg's orders are done.
	if _, _, err := waitJobs(ctx, direct, 2*time.Minute); err != nil {
		return err
	}
	orderStatements, err := loadtest.ReadStatements(ctx, counter)
	if err != nil {
		return err
	}
	perOrder := loadtest.PerOperation(orderStatements, defNew.N)
	say("HTTP: the order floor, a bare Go program making an order's exchanges (%.0f round trips)", perOrder)
	orderFloor, err := measureOrderFloor(ctx, f, dir, direct, shop, int(math.Round(perOrder)), opts)
	if err != nil {
		return err
	}
	say("HTTP: replays, the shop as shipped")
	defReplay, err := dweb.measure(ctx, f, "replays-defaults", func() loadtest.Result {
		return loadtest.Run(ctx, "app as shipped: replays (POST, same key)", opts, dshop.Replay)
	})
	if err != nil {
		return err
	}
	say("HTTP: orders through the pages, the shop as shipped")
	defBrowser, err := dweb.measure(ctx, f, "browser-orders", func() loadtest.Result {
		return loadtest.Run(ctx, "app as shipped: browser orders (add to cart, GET /checkout, POST its form, GET the receipt)", opts, dshop.BrowserOrder)
	})
	if err != nil {
		return err
	}

	// What tracing costs: the shop as shipped again, with the OpenTelemetry
	// SDK off (no spans, no recent-traces store), a fresh process too.
	dweb.stop()
	nweb, nshop, err := startShop(ctx, f, dir, shopURL, direct, sizes[0], nil, "RUN_JOBS=1", "OTEL_SDK_DISABLED=true")
	if err != nil {
		return err
	}
	defer func() { nweb.stop() }()
	say("HTTP: new orders and replays, the shop as shipped with tracing off (OTEL_SDK_DISABLED=true)")
	offNew, err := nweb.measure(ctx, f, "", func() loadtest.Result {
		return loadtest.Run(ctx, "app as shipped, tracing off: new orders", opts, nshop.NewOrder)
	})
	if err != nil {
		return err
	}
	offReplay, err := nweb.measure(ctx, f, "", func() loadtest.Result {
		return loadtest.Run(ctx, "app as shipped, tracing off: replays", opts, nshop.Replay)
	})
	if err != nil {
		return err
	}
	nweb.stop()
	// And what is left with the access log's line off too: the router,
	// the middleware chain, the decode and the lookup, against the bare
	// server's floor.
	qweb, qshop, err := startShop(ctx, f, dir, shopURL, direct, sizes[0], nil, "RUN_JOBS=1", "OTEL_SDK_DISABLED=true", "LOG_LEVEL=warn")
	if err != nil {
		return err
	}
	defer func() { qweb.stop() }()
	say("HTTP: replays, the shop as shipped with tracing and the access log off (LOG_LEVEL=warn)")
	quietReplay, err := qweb.measure(ctx, f, "replays-quiet", func() loadtest.Result {
		return loadtest.Run(ctx, "app as shipped, tracing and access log off: replays", opts, qshop.Replay)
	})
	if err != nil {
		return err
	}
	qweb.stop()

	label := func(r loadtest.Result, size string) loadtest.Result {
		if len(sizes) > 1 {
			r.Name += " [DB_MAX_CONNS=" + orDefault(size) + "]"
		}
		return r
	}
	appNew, appReplay, appPage = label(appNew, sizes[0]), label(appReplay, sizes[0]), label(appPage, sizes[0])
	rows := []loadtest.Row{
		{Result: pgMin},
		{Result: appNew, Baseline: &pgMin, Target: "≥ 0.5× (RUN_JOBS=0)"},
		{Result: defNew, Baseline: &pgMin, Target: "≥ 0.35× (as shipped)"},
		{Result: defBrowser, Baseline: &pgMin, Target: "— (four requests an order)"},
		{Result: pgPoint},
		{Result: defReplay, Baseline: &pgPoint, Target: "≥ 0.6× (as shipped)"},
		{Result: defNew},
		{Result: offNew, Baseline: &defNew, Target: "— (what tracing costs an order)"},
		{Result: defReplay},
		{Result: offReplay, Baseline: &defReplay, Target: "— (what tracing costs a replay)"},
		{Result: quietReplay, Baseline: &defReplay, Target: "— (what tracing and the access log cost a replay)"},
		{Result: pgNew},
		{Result: appNew, Baseline: &pgNew, Target: "≥ 0.6×"},
		{Result: appNewJobs, Baseline: &pgNew, Target: "— (the order and its 2 jobs)"},
		{Result: pgSeed},
		{Result: appNew, Baseline: &pgSeed, Target: "≥ 2×"},
		{Result: pgPoint},
		{Result: appReplay, Baseline: &pgPoint, Target: "≥ 0.3×, ≤ 60 µs CPU"},
		{Result: bare, Baseline: &pgPoint, Target: "— (the floor of a Go server here)"},
		{Result: defNew},
		{Result: orderFloor, Baseline: &defNew, Target: "— (what an order's exchanges alone cost)"},
		{Result: appPage, Alone: true},
	}
	all := []loadtest.Result{pgMin, pgNew, appNew, appNewJobs, pgSeed, pgPoint, appReplay, bare, appPage, defNew, defReplay, defBrowser, offNew, offReplay, orderFloor, quietReplay}
	judged := legs{fakeDB: f.fakeStore == "postgres", pgNew: pgNew, appNew: appNew, appNewJobs: appNewJobs, pgSeed: pgSeed, pgPoint: pgPoint, appReplay: appReplay, floor: bare,
		pgMin: pgMin, defNew: defNew, defReplay: defReplay, perOrder: perOrder, orderFloor: orderFloor, quietReplay: quietReplay}
	for _, size := range sizes[1:] {
		web.stop()
		// Into web only once started: on an error web stays the stopped
		// process, whose deferred stop is a no-op, rather than nil.
		w, s, err := startShop(ctx, f, dir, shopURL, direct, size, func(*webProc) {
			say("shop restarted with DB_MAX_CONNS=%s", orDefault(size))
		})
		if err != nil {
			return err
		}
		web, shop = w, s
		legs := []struct {
			name, profile string
			do            func(context.Context, int) error
		}{
			{"app: new orders (POST, fresh key)", "", shop.NewOrder},
			{"app: replays (POST, same key)", "", shop.Replay},
			{"app: checkout page (GET /checkout)", "", shop.CheckoutPage},
		}
		var rs []loadtest.Result
		for _, leg := range legs {
			say("HTTP: %s", leg.name)
			r, err := web.measure(ctx, f, leg.profile, func() loadtest.Result { return loadtest.Run(ctx, leg.name, opts, leg.do) })
			if err != nil {
				return err
			}
			rs = append(rs, label(r, size))
		}
		all = append(all, rs...)
		rows = append(rows,
			loadtest.Row{Result: rs[0], Baseline: &pgNew, Target: "≥ 0.6×"},
			loadtest.Row{Result: rs[1], Baseline: &pgPoint, Target: "≥ 0.3×, ≤ 60 µs CPU"},
			loadtest.Row{Result: rs[2], Alone: true})
	}
	if f.bouncer {
		// The cost of PgBouncer itself: the same scripts straight to
		// PostgreSQL, prepared, in the same run.
		directEnv, err := libpqEnv(direct)
		if err != nil {
			return err
		}
		pgd := loadtest.Pgbench{Env: directEnv, Mode: "prepared", Dir: dir}
		say("pgbench: the same scripts without PgBouncer")
		dNew, err := pgd.Run(ctx, "pgbench: new order, direct (no PgBouncer)", "neworder.sql", opts, orderDefs)
		if err != nil {
			return err
		}
		dPoint, err := pgd.Run(ctx, "pgbench: point select, direct (no PgBouncer)", "pointselect.sql", opts,
			map[string]string{"cust": cust, "key": replayKey})
		if err != nil {
			return err
		}
		// Without prepared statements but without PgBouncer either: what
		// losing them costs, apart from the extra hop.
		pge := loadtest.Pgbench{Env: directEnv, Mode: "extended", Dir: dir}
		eNew, err := pge.Run(ctx, "pgbench: new order, direct, -M extended", "neworder.sql", opts, orderDefs)
		if err != nil {
			return err
		}
		rows = append(rows,
			loadtest.Row{Result: dNew},
			loadtest.Row{Result: eNew, Baseline: &dNew, Target: "cost of no prepared statements"},
			loadtest.Row{Result: pgNew, Baseline: &dNew, Target: "cost of PgBouncer"},
			loadtest.Row{Result: dPoint},
			loadtest.Row{Result: pgPoint, Baseline: &dPoint, Target: "cost of PgBouncer"})
		all = append(all, eNew)
		all = append(all, dNew, dPoint)
	}
	if f.growth != "" {
		sizes, err := parseSizes(f.growth)
		if err != nil {
			return err
		}
		g, err := growth(ctx, direct, pgb, opts, cust, sizes)
		if err != nil {
			return err
		}
		rows = append(rows, g...)
		for _, r := range g {
			all = append(all, r.Result)
		}
	}
	var sweepTook time.Duration
	var dropTook []string
	if f.sweep != "" {
		n, err := parseSizes(f.sweep)
		if err != nil || len(n) != 1 {
			return fmt.Errorf("-sweep: want one size such as 1m")
		}
		legs, err := parseSweepBy(f.sweepBy)
		if err != nil {
			return err
		}
		for _, leg := range legs {
			var g []loadtest.Row
			switch leg {
			case "delete":
				g, sweepTook, err = sweepLoad(ctx, f.web, direct, pgb, opts, cust, n[0])
			default:
				var took string
				g, took, err = partitionLoad(ctx, direct, pgb, opts, cust, n[0], leg == "partition")
				dropTook = append(dropTook, took)
			}
			if err != nil {
				return err
			}
			rows = append(rows, g...)
			for _, r := range g {
				all = append(all, r.Result)
				if r.Baseline != nil && r.Target == "p99 within 20 %" {
					judged.sweeps = append(judged.sweeps, r)
				}
			}
		}
	}
	load1 := loadavg()
	via := "directly (pgx cache_statement, pgbench -M prepared)"
	if f.bouncer {
		via = "through PgBouncer 1.18, transaction pooling (pgx cache_describe, pgbench -M extended)"
	}
	fmt.Printf("\n%d clients, %s per leg, PostgreSQL reached %s; DB_MAX_CONNS=%s\n", f.clients, f.duration, via, orDefault(strings.Join(sizes, ",")))
	fmt.Printf("the fake Stripe's store: %s\n", fakeStoreLine(f.fakeStore))
	fmt.Printf("machine: %d CPUs, %s memory, load average %s before and %s after (shared: compare within one run only)\n\n",
		runtime.NumCPU(), memTotal(), load0, load1)
	if err := loadtest.PrintTable(os.Stdout, rows); err != nil {
		return err
	}
	vs, err := verdicts(judged)
	if err != nil {
		return err
	}
	if err := loadtest.PrintVerdicts(os.Stdout, vs); err != nil {
		return err
	}
	if err := loadtest.PrintStatements(os.Stdout, "What a new order costs the shop's database, as shipped, its two jobs included (pg_stat_statements, top-level statements, during the leg and until its jobs were done)",
		orderStatements, defNew.N); err != nil {
		return err
	}
	if sweepTook > 0 {
		fmt.Printf("\nweb sweep deleted the %s expired keys in %s\n", f.sweep, sweepTook.Round(time.Millisecond))
	}
	for _, d := range dropTook {
		fmt.Printf("\n%s\n", d)
	}
	for _, r := range all {
		if r.FirstErr != nil {
			fmt.Printf("\n%s: first error: %v\n", r.Name, r.FirstErr)
		}
	}
	return nil
}

type webProc struct {
	cmd   *exec.Cmd
	base  string
	admin string
	smtp  string // the demo mail catcher's address, for `web worker`
	// fake is the fake Stripe the shop pays through, a process of its own
	// on a database of its own; catcher the mail catcher, in this process.
	fake    *webProc
	catcher *mailcatcher.Server
	done    chan error
	stopped sync.Once
}

// startShop starts the shop's binary (startWeb, with env), calls started (if
// not nil) once it is ready, and sets up a loadtest.Shop of it for f.clients
// workers. If the shop cannot be set up, it stops the process.
func startShop(ctx context.Context, f flags, dir, dbURL, direct, maxConns string, started func(*webProc), env ...string) (*webProc, *loadtest.Shop, error) {
	w, err := startWeb(ctx, f, dir, dbURL, direct, maxConns, env...)
	if err != nil {
		return nil, nil, err
	}
	if started != nil {
		started(w)
	}
	shop, err := loadtest.NewShop(w.base, f.clients)
	if err != nil {
		w.stop()
		return nil, nil, err
	}
	if err := shop.Setup(ctx, f.clients); err != nil {
		w.stop()
		return nil, nil, fmt.Errorf("setup: %w", err)
	}
	return w, shop, nil
}

// startWeb starts the shop's binary on dbURL and waits until it is ready.
// env is added after its own settings, so that a variable set in both takes
// env's value (os/exec keeps the last of a duplicated key): "RUN_JOBS=1",
// say, runs the order's jobs in the web process.
func startWeb(ctx context.Context, f flags, dir, dbURL, direct, maxConns string, env ...string) (*webProc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	admin, err := freeAddr()
	if err != nil {
		return nil, err
	}
	// By default the order's jobs (the outbox's consumers) do not run in
	// the web process (RUN_JOBS=0) but in `web worker` (startWorker), so
	// that the order path and what it triggers can be measured apart; with
	// RUN_JOBS=1 in env, they run in the web process, as `make run` ships.
	// The mail goes to a catcher in this process, so that it is delivered
	// rather than retried.
	catcher, err := mailcatcher.Listen("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	catcher.SetLimit(100) // delivered, not kept: the leg counts jobs, not mail
	smtp := catcher.Addr()
	fake, stripeSecret, err := startFake(ctx, f, dir, direct, "http://"+addr+"/webhooks/stripe")
	if err != nil {
		catcher.Close()
		return nil, err
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	cmd := exec.Command(f.web)
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+dbURL, "MIGRATE_DATABASE_URL="+direct,
		"ADDR="+addr, "ADMIN_ADDR="+admin, "SESSION_SECRET="+hex.EncodeToString(secret),
		"STRIPE_API_BASE="+fake.base, "STRIPE_SECRET_KEY="+stripeSecret, "STRIPE_WEBHOOK_SECRET="+stripeSecret,
		"SMTP_ADDR="+smtp, "RUN_JOBS=0",
		"CUSTOMER_BURST=1000", "CUSTOMERS_PER_MINUTE=1000", "DB_MAX_CONNS="+maxConns,
		// Its clients are one address sending thousands a second: the
		// write limits are lifted (handlers.WriteLimits).
		"WRITES_PER_MINUTE=100000000", "WRITE_BURST=100000000", "ADDRESS_WRITES_PER_MINUTE=100000000",
		"ADDRESS_WRITE_BURST=100000000", "DECLINES_PER_HOUR=100000000", "DECLINE_BURST=100000000", "WRITES_IN_FLIGHT=100000", "ADDRESS_WRITES_IN_FLIGHT=100000")
	cmd.Env = append(cmd.Env, env...)
	logPath := f.logFile
	if logPath == "" {
		logPath = filepath.Join(dir, "web.log")
	}
	w, err := spawn(cmd, logPath)
	if err != nil {
		fake.stop()
		catcher.Close()
		return nil, err
	}
	w.base, w.admin, w.smtp, w.fake, w.catcher = "http://"+addr, "http://"+admin, smtp, fake, catcher
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(w.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return w, nil
			}
		}
		select {
		case err := <-w.done:
			b, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("web exited (%v):\n%s", err, tailStr(string(b)))
		case <-ctx.Done():
			w.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.stop()
			return nil, errors.New("web not ready within 60s")
		}
	}
}

// createMinimal creates the minimal pattern's tables (loadtest.MinimalSchema)
// in the database pgbench runs on.
func createMinimal(ctx context.Context, direct string) error {
	conn, err := pgx.Connect(ctx, direct)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, loadtest.MinimalSchema); err != nil {
		return fmt.Errorf("the minimal pattern's tables: %w", err)
	}
	return nil
}

// fakeSchema applies the fake Stripe's schema to the database pgbench runs
// on: with -fake-store=postgres the new order's script issues the fake's
// two transactions too, as the fake itself does on a database of its own on
// the same server, so the server does the same work in the app's leg.
func fakeSchema(ctx context.Context, direct string) error {
	pool, err := pgxpool.New(ctx, direct)
	if err != nil {
		return fmt.Errorf("the fake's schema: %w", err)
	}
	defer pool.Close()
	return fakestripe.Migrate(ctx, pool)
}

// spawn starts cmd, its output appended to logPath, to die with this
// process.
func spawn(cmd *exec.Cmd, logPath string) (*webProc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", strings.Join(cmd.Args, " "), err)
	}
	w := &webProc{cmd: cmd, done: make(chan error, 1)}
	go func() { w.done <- cmd.Wait(); logf.Close() }()
	return w, nil
}

// startWorker starts `web worker` on dbURL, sending mail to smtp.
func startWorker(ctx context.Context, f flags, dir, dbURL, smtp string) (*webProc, error) {
	cmd := exec.CommandContext(ctx, f.web, "worker")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "SMTP_ADDR="+smtp, "LOG_LEVEL=warn")
	return spawn(cmd, filepath.Join(dir, "worker.log"))
}

// measure runs leg, recording the CPU time of the web process and of this
// load generator around it and, with -profile and a name, a CPU profile of
// most of it.
func (w *webProc) measure(ctx context.Context, f flags, name string, leg func() loadtest.Result) (loadtest.Result, error) {
	profiled := make(chan error, 1)
	if f.profileDir != "" && name != "" {
		secs := max(1, int(f.duration.Seconds())-1)
		go func() { profiled <- w.profile(ctx, filepath.Join(f.profileDir, name+".pprof"), secs) }()
	} else {
		profiled <- nil
	}
	pid := w.cmd.Process.Pid
	before, err := loadtest.ProcessCPU(pid)
	if err != nil {
		return loadtest.Result{}, err
	}
	fake0, err := w.fakeCPU()
	if err != nil {
		return loadtest.Result{}, err
	}
	self0, err := loadtest.ProcessCPU(os.Getpid())
	if err != nil {
		return loadtest.Result{}, err
	}
	r := leg()
	after, err := loadtest.ProcessCPU(pid)
	if err != nil {
		return loadtest.Result{}, err
	}
	self1, err := loadtest.ProcessCPU(os.Getpid())
	if err != nil {
		return loadtest.Result{}, err
	}
	fake1, err := w.fakeCPU()
	if err != nil {
		return loadtest.Result{}, err
	}
	r.CPU, r.ClientCPU, r.ProviderCPU = after-before, self1-self0, fake1-fake0
	if err := <-profiled; err != nil {
		return r, err
	}
	return r, nil
}

// fakeCPU is the CPU time of w's fake provider so far; zero for a process
// without one (the floor server).
func (w *webProc) fakeCPU() (time.Duration, error) {
	if w.fake == nil {
		return 0, nil
	}
	return loadtest.ProcessCPU(w.fake.cmd.Process.Pid)
}

func (w *webProc) profile(ctx context.Context, path string, secs int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", w.admin, secs), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = io.Copy(out, resp.Body)
	return err
}

// stop ends the process and waits for it; stopping it again does nothing.
func (w *webProc) stop() {
	w.stopped.Do(func() {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.done: //nolint:errcheck // stopped on purpose: how it exited says nothing
		case <-time.After(20 * time.Second):
			_ = w.cmd.Process.Kill()
			<-w.done //nolint:errcheck // killed on purpose
		}
		// The provider and the catcher outlive the shop, whose last
		// requests call them.
		if w.fake != nil {
			w.fake.stop()
		}
		if w.catcher != nil {
			w.catcher.Close()
		}
	})
}

// libpqEnv turns a localpg URL into pgbench's PG* variables.
func libpqEnv(raw string) ([]string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	return []string{"PGHOST=" + q.Get("host"), "PGPORT=" + q.Get("port"), "PGUSER=" + u.User.Username(),
		"PGDATABASE=" + strings.TrimPrefix(u.Path, "/")}, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.Atoi(f[1])
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "?"
}

func orDefault(size string) string {
	if size == "" {
		return "pgx default (max(4, CPUs))"
	}
	return size
}

func tailStr(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}
