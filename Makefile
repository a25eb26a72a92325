# Run `make` or `make help` for the list of targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Every module needs Go 1.27.3 (go.mod): the machines' Go 1.26.8 has 14
# standard-library advisories that reach the shop (make vulncheck). Go
# fetches that toolchain through the module proxy the first time (about
# 10 s). Exported here so that every recipe, and every go it starts, uses
# it; a shell of your own needs the same export (README).
export GOTOOLCHAIN := go1.27.3

SQLC  := go tool -modfile=tools/go.mod sqlc
TEMPL := go tool templ

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z\/-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: bin/demo bin/fakestripe bin/mailcatcher bin/runlocal ## serve on http://127.0.0.1:8080 with a local PostgreSQL (unless DATABASE_URL is set), the fake Stripe and a mail catcher beside it; metrics, pprof, River UI (/riverui/) and caught mail (/mail) on 127.0.0.1:9090
	@mkdir -p .data && test -s .data/session-secret || (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > .data/session-secret)
	DEMO="$${DEMO:-1}" ADMIN_ADDR="$${ADMIN_ADDR-127.0.0.1:9090}" \
		SESSION_SECRET="$${SESSION_SECRET:-$$(cat .data/session-secret)}" bin/runlocal -web bin/demo -fake bin/fakestripe -catcher bin/mailcatcher -data .data

# The demo's binary: the shop with the double-click lab mounted (demo/, a
# module of its own: demo/lab and demo/cmd/demo; docs/architecture.md).
.PHONY: bin/demo
bin/demo:
	@go build -C demo -o $(CURDIR)/bin/demo ./cmd/demo

# The fake Stripe (fakestripe/, a module of its own; docs/architecture.md):
# make run, the chaos harness and the load test run it as a process of
# its own, on a database of its own.
.PHONY: bin/fakestripe
bin/fakestripe:
	@go build -C fakestripe -o $(CURDIR)/bin/fakestripe ./cmd/fakestripe

# The mail catcher (mailcatcher/, a module of its own): make run starts it
# beside the shop, whose admin listener shows what it caught at /mail.
.PHONY: bin/mailcatcher
bin/mailcatcher:
	@go build -C mailcatcher -o $(CURDIR)/bin/mailcatcher ./cmd/mailcatcher

# A highly available PostgreSQL (bench/cmd/ha, bench/hapg; docs/ha.md): a
# pg_auto_failover monitor and two synchronous data nodes on loopback ports,
# kept in .data/ha. It prints the DATABASE_URL to start make run with, then
# the nodes' states as they change, until Ctrl-C. HA_STANDBYS=2 makes it
# three data nodes, whose primary keeps a synchronous standby when one is
# lost (docs/ha.md); a formation keeps the number it was created with, so
# use another HA_DIR (or delete .data/ha) to change it.
HA_STANDBYS ?= 1
HA_DIR ?= .data/ha
.PHONY: ha
ha: bin/ha ## highly available PostgreSQL (pg_auto_failover, two synchronous nodes; HA_STANDBYS=2 for three) in .data/ha; prints the DATABASE_URL for make run
	bin/ha -dir $(HA_DIR) -standbys $(HA_STANDBYS)

.PHONY: idemcheck
idemcheck: bin/idemcheck ## check the running shop's idempotency keys (start it with make run first)
	bin/idemcheck -base http://127.0.0.1:8080 -profile shop

# The test bench is a module of its own (bench/go.mod): the chaos harness,
# the load test, the failover formation, the PgBouncer and HAProxy
# launchers and the tools that start them. Its commands are built into bin/
# and run from the root, so that their paths (bin/web, .data/...) are the
# root's. The shop's binary links none of it (docs/architecture.md).
BENCH_CMDS := bin/chaos bin/ha bin/loadtest bin/withpgbouncer bin/idemcheck bin/testpg bin/runlocal bin/examples
.PHONY: $(BENCH_CMDS)
$(BENCH_CMDS):
	@go build -C bench -o $(CURDIR)/$@ ./cmd/$(notdir $@)

# The small modules beside the shop, each a program or library of its own
# that the shop's binary does not link (docs/architecture.md): the fake
# Stripe, the PostgreSQL launcher and the mail catcher. make test, vet,
# lint and vulncheck take each in.
SIDE_MODULES := fakestripe localpg mailcatcher

# The kit's adapters to a web framework, each a module of its own beside
# the kit's core (idem/go.mod requires no web framework): Echo v4's and
# Echo v5's. make test, test/kit, vet, lint and vulncheck take each in, as
# they take in idem/.
KIT_ADAPTERS := idem/idemecho idem/idemecho5

# One throwaway PostgreSQL per run (bench/cmd/testpg; see docs/testing.md): a
# target whose tests need PostgreSQL runs them under $(TESTPG), which starts
# the server and sets TEST_DATABASE_URL for them, unless TEST_DATABASE_URL
# names a server already: a server of your own, or the one of the make test
# (or make fuzz) that called the target. Test binaries share the server
# through template databases of their own (internal/pgtest, idem/idemtest).
TESTPG = $(if $(TEST_DATABASE_URL),,bin/testpg --)

.PHONY: test
test: deps verify vet lint bin/testpg ## everything CI checks: generated code, vet, lint, all tests (-race), browser tests
	$(TESTPG) $(MAKE) --no-print-directory test/legs

# The legs of make test, one after the other, on make test's one server
# (test/pgbouncer puts PgBouncer in front of it; test/chaos runs servers of
# its own, to crash them). Not listed by make help: run make test.
.PHONY: test/legs
test/legs:
	scripts/leg go-race bash -c 'go test -race -count=1 -timeout 20m $$(go list ./... | grep -v -e /internal/browsertest)'
	scripts/leg kit bash -c 'cd idem && go test -race -count=1 -timeout 10m ./...'
	scripts/leg js $(MAKE) -s test/js
	scripts/leg kit-adapters bash -c 'for m in $(KIT_ADAPTERS); do (cd $$m && go test -race -count=1 -timeout 10m ./...) || exit 1; done'
	scripts/leg bench bash -c 'cd bench && go test -race -count=1 -timeout 15m $$(go list ./... | grep -v -e "/model$$" -e "/hapg$$")'
	scripts/leg side-modules bash -c 'for m in $(SIDE_MODULES); do (cd $$m && go test -race -count=1 -timeout 10m ./...) || exit 1; done'
	scripts/leg demo bash -c 'cd demo && go test -race -count=1 -timeout 10m $$(go list ./... | grep -v -e /browsertest)'
	scripts/leg examples $(MAKE) -s test/examples
	scripts/leg pgbouncer $(MAKE) -s test/pgbouncer
	scripts/leg querymodes $(MAKE) -s test/querymodes
	scripts/leg fuzz $(MAKE) -s fuzz FUZZ_SCALE=1
	scripts/leg model+hapg $(MAKE) -s -j2 --output-sync=target model test/hapg
	scripts/leg chaos $(MAKE) -s test/chaos
	scripts/leg browser $(MAKE) -s test/browser

# The failover formation's own tests (bench/hapg): about three minutes,
# nearly all of it waiting for pg_auto_failover's state machine, so make
# test runs them beside the model, which keeps one core busy for as long.
.PHONY: test/hapg
test/hapg:
	cd bench && go test -race -count=1 -timeout 15m ./hapg/

# The browser tests run on their own, after the rest and without -race: the
# server code they drive is raced by the handler tests, and Chromium needs
# the CPU. They are retried once, because on a loaded 2-core machine
# chromedp now and then loses a page's execution context after a navigation
# and a wait times out; a second failure fails the build.
.PHONY: test/browser
test/browser: bin/testpg ## headless-Chromium tests of the checkout and of the lab (demo/browsertest)
	$(TESTPG) $(SHELL) -c 'go test -count=1 -timeout 15m ./internal/browsertest/ || { echo "browser tests failed; retrying once"; go test -count=1 -timeout 15m ./internal/browsertest/; }'
	$(TESTPG) $(SHELL) -c 'cd demo && { go test -count=1 -timeout 15m ./browsertest/ || { echo "browser tests failed; retrying once"; go test -count=1 -timeout 15m ./browsertest/; }; }'

.PHONY: test/short
test/short: bin/testpg ## the tests without -race, for a quick loop
	$(TESTPG) go test -count=1 ./...

# The kit is a module of its own (idem/go.mod): its tests need only a
# PostgreSQL server, nothing of the application. Under testpg they share one;
# idemtest starts none of its own, so a plain `cd idem && go test ./...`
# needs TEST_DATABASE_URL set (see docs/testing.md).
.PHONY: test/kit
test/kit: bin/testpg ## the idempotency kit's own tests (the idem module), on a throwaway PostgreSQL
	$(TESTPG) $(SHELL) -c 'cd idem && go test -count=1 ./... && for m in $(KIT_ADAPTERS); do (cd $(CURDIR)/$$m && go test -count=1 ./...) || exit 1; done'

# The kit's ES module for forms sent with fetch (idem/idemjs/idem.js): its
# unit tests with Node's own test runner, against a real HTTP server on
# loopback; no npm install, the module has no dependencies. Its tests in
# Chromium are browser tests (internal/browsertest/idemjs_test.go).
.PHONY: test/js
test/js: ## the kit's JavaScript module's unit tests (node --test, Node 18 or later)
	@command -v node >/dev/null || scripts/install-deps
	cd idem/idemjs && node --test

# The kit's examples (examples/*), each a module of its own, built and tested
# as a newcomer would: each copied into a temporary folder outside the tree,
# its replace pointed at idem/, and built with nothing but its committed
# go.mod and go.sum (bench/cmd/examples); the glue counts and the code blocks
# that idem/README.md, docs/kit.md and the kit's section of README.md quote
# are checked against the examples.
.PHONY: test/examples
test/examples: bin/testpg bin/examples ## the kit's examples, built and tested from fresh copies outside the tree; the glue counts and code the kit's documents quote
	$(TESTPG) bin/examples

# Every Fuzz target of the module, each for a fixed number of executions
# (scripts/fuzz-budgets, about 3 s each on a quiet 2-core machine) times
# FUZZ_SCALE: make test runs 1x, make fuzz 20x by default. Executions, not
# seconds, because a -fuzztime duration can fail a target that found nothing
# (Go's coordinator deadline race, golang/go#75804; see scripts/fuzz). Some
# targets fuzz handlers on PostgreSQL, and every fuzz worker runs TestMain:
# without a server in TEST_DATABASE_URL, make fuzz calls itself again under
# testpg, so that all of them share one.
FUZZ_SCALE ?= 20
.PHONY: fuzz
fuzz: bin/testpg ## run every Fuzz* target for FUZZ_SCALE times its budget in scripts/fuzz-budgets (default 20, about 1m each; make test uses 1)
ifeq ($(TEST_DATABASE_URL),)
	@$(TESTPG) $(MAKE) -s fuzz FUZZ_SCALE=$(FUZZ_SCALE)
else
	@scripts/fuzz $(FUZZ_SCALE)
endif

# The SPIN model of the protocol (bench/model/, docs/model.md): every state of
# its three configurations, then each mutation, which must yield its
# counterexample; -v prints the state-space figures and the counterexamples.
# make test runs it here, and leaves bench/model out of its -race leg (there is
# nothing to race: the tests run spin and the verifier it generates). The
# timeout leaves room for a busy machine: the default configuration's three
# searches take some 80 s each on a quiet one, and several times that
# under the chaos runs' load (docs/model.md).
.PHONY: model
model: ## model-check the protocol with SPIN, and each mutation's counterexample (part of make test; docs/model.md)
	@command -v spin >/dev/null || scripts/install-deps
	set -o pipefail; go test -C bench -count=1 -timeout 20m -v ./model/ | grep -v '^=== '

# The chaos harness (bench/cmd/chaos, bench/chaos): shops, provider and
# PostgreSQL as separate processes, killed, paused and crashed, rows held
# locked and the mail server stalled while clients check out; exits
# non-zero when an invariant broke. See docs/failure-model.md.
.PHONY: bin/web
bin/web:
	@go build -o bin/web ./cmd/web

# The provider's webhooks in every chaos run: a fifth of the events
# delivered twice, a fifth held back so that later ones overtake them, and
# every delivery 200 ms late (the invariants are the same with them).
WEBHOOK_FAULTS := -webhook-duplicates 0.2 -webhook-reorder 0.2 -webhook-delay 200ms

.PHONY: chaos
chaos: bin/web bin/fakestripe bin/chaos ## chaos harness, long: 10,000 checkouts under kills, stalls, DB crashes and stalls, row locks, SMTP stalls, provider faults, webhooks twice, late and out of order
	bin/chaos -v -web bin/web $(LONG_CHAOS)

# Cancels and refunds in the chaos runs on one server (issue 40): a fifth
# of the placed orders cancelled, refunded in part by operators on the
# admin listeners, or both at once, and one product's last items contended
# (bench/chaos/refunds.go). In the synchronous failover runs too (chaos/ha,
# chaos/ha/3, jepsen and their short versions); not in the asynchronous
# counterexample, whose verdict knows only the orders' lost writes.
REFUNDS := -refunds 0.2 -last-items 4

LONG_CHAOS := -instances 3 -clients 48 -checkouts 10000 -duration 8m -drain 1m -shared-keys 0.05 \
	-kills 24 -stalls 16 -db-crashes 6 -db-stalls 4 -row-locks 8 -smtp-stalls 6 $(WEBHOOK_FAULTS) $(REFUNDS)

# Network partitions (bench/chaos/netns.go, partition.go, docs/analysis.md):
# each shop and the provider in a network namespace of their own on a
# bridge (root and iproute2; no fixed name or port: the run's pid names
# them, and a run sweeps what a killed one left). Partitions cut a shop
# from PostgreSQL (both ways, its queries lost, its answers lost) or from
# the provider (both ways, its answers lost), or the provider's webhooks;
# lossy links slow, lose and reorder a shop's packets (tc netem, or HTB
# lanes with a random BPF classifier on a kernel without netem).
NET_FAULTS := -net -partitions 4 -partition 6s -netem 2 -netem-for 6s
.PHONY: chaos/net/short
chaos/net/short: bin/web bin/fakestripe bin/chaos ## chaos/short's kills and stalls with 4 network partitions and 2 lossy links, in about a minute (root)
	bin/chaos -web bin/web -instances 3 -clients 16 -checkouts 250 -duration 30s -drain 8s -settle 30s -shared-keys 0.05 \
		-kills 1 -stalls 1 $(NET_FAULTS) $(WEBHOOK_FAULTS)

# make jepsen is the long run kept as evidence (docs/analysis.md): chaos's
# run with a seed it prints (SEED=n repeats its choices; the timing still
# varies) and a folder it keeps, .data/jepsen/<seed>, holding every
# process's log, the history every client operation and both sides' final
# state went into (history.json), and porcupine's page for each key the
# checker finds not linearizable. bin/chaos -check <folder>/history.json
# checks a kept history again without the run.
# (Set once: a recursive SEED would draw a new seed at each use.)
ifeq ($(SEED),)
SEED := $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
endif
.PHONY: jepsen
jepsen: bin/web-skew bin/fakestripe bin/chaos ## the long run kept as evidence, all faults at once (root): partitions, lossy links, skewed clocks, failovers, kills, stalls; seed (SEED=n), every client operation's history checked (porcupine), kept in .data/jepsen/<seed>
	@echo "jepsen: seed $(SEED), kept in .data/jepsen/$(SEED)"
	bin/chaos -v -web bin/web-skew $(JEPSEN) -seed $(SEED) -dir .data/jepsen/$(SEED)

# The long run's faults: chaos/ha's formation (synchronous standby,
# failovers, switchovers, primary kills, standby stops) and its shop
# faults, the shops' clocks minutes apart (bin/web-skew), the shops and
# the provider in namespaces of their own with partitions and lossy links
# every few seconds, webhooks twice, late and out of order, 5 % twins;
# 13,000 checkouts over 18 minutes (12 a second: a 2-core machine shared
# with other work kept 13 a second with 48 clients), some 23,000 client
# operations; about 22 minutes in all.
JEPSEN = -ha -net $(CLOCK_SKEWS) -instances 3 -clients 48 -checkouts 13000 -duration 18m -drain 1m -settle 1m -shared-keys 0.05 \
	-failovers 3 -switchovers 2 -primary-kills 2 -standby-stops 2 -kills 24 -stalls 10 -row-locks 8 -smtp-stalls 4 \
	-partitions 60 -partition 10s -netem 16 -netem-for 10s $(WEBHOOK_FAULTS) $(REFUNDS)

.PHONY: chaos/short
chaos/short: bin/web bin/fakestripe bin/chaos ## chaos harness in under a minute (part of make test)
	bin/chaos -web bin/web -instances 3 -clients 16 -checkouts 250 -duration 30s -drain 8s -settle 30s -shared-keys 0.05 \
		-kills 2 -stalls 2 -db-crashes 1 -db-stalls 1 -row-locks 1 -smtp-stalls 1 -smtp-stall 5s $(WEBHOOK_FAULTS) -refunds 0.1 -last-items 3

# The failover runs (bench/chaos/ha.go, docs/failure-model.md): the
# shop's database is a pg_auto_failover formation (bench/hapg) of a
# primary and a synchronous standby, reached through one multi-host URL;
# HAProxy (bench/haproxy) is in front of the shops; the provider keeps
# its charges on a PostgreSQL of its own. Failovers kill the primary's
# node just after its standby's WAL receiver was paused, so the standby
# lacks the last commits; synchronous, those were never acknowledged.
# chaos/ha/async is the counterexample: the same run with an asynchronous
# standby, which passes only when the harness finds the acknowledged
# orders the failovers lost (and nothing else broken).
HA_CHAOS := -ha -instances 3 -clients 32 -checkouts 6000 -duration 4m -drain 30s -settle 1m \
	-failovers 4 -switchovers 2 -primary-kills 2 -standby-stops 2 -kills 8 -stalls 4 -row-locks 4 -smtp-stalls 2 $(WEBHOOK_FAULTS)

.PHONY: chaos/ha
chaos/ha: bin/web bin/fakestripe bin/chaos ## chaos harness on a failover formation through HAProxy, long: 4 failovers, 2 switchovers, primary and standby disruptions, cancels and refunds, 0 violations
	bin/chaos -v -web bin/web $(HA_CHAOS) $(REFUNDS)

# chaos/ha/3 is chaos/ha on three data nodes (-standbys 2, number_sync_standbys
# 1): a standby stopped, or one leaving for a switchover, leaves the other
# confirming commits, so the primary never commits alone.
.PHONY: chaos/ha/3
chaos/ha/3: bin/web bin/fakestripe bin/chaos ## chaos/ha on three data nodes (two synchronous standbys), long
	bin/chaos -v -web bin/web $(HA_CHAOS) -standbys 2 $(REFUNDS)

.PHONY: chaos/ha/async
chaos/ha/async: bin/web bin/fakestripe bin/chaos ## the counterexample, long: chaos/ha with an asynchronous standby; passes when it finds the acknowledged orders the failovers lost
	bin/chaos -v -web bin/web $(HA_CHAOS) -async -expect-loss

.PHONY: chaos/ha/short
# Its drive is long enough for its two formation disruptions one after the
# other (they wait for the formation to be whole again): a failover with
# REQUIRE_SYNC_REPLICA took up to 50 s from the kill to a whole formation in
# make test's own chaos leg (the old primary's rejoin; writes are refused
# meanwhile), and a 40 s drive left the switchover unmade.
chaos/ha/short: bin/web bin/fakestripe bin/chaos ## chaos/ha in about two minutes (part of make test)
	bin/chaos -web bin/web -ha -instances 2 -clients 16 -checkouts 500 -duration 90s -drain 8s -settle 30s \
		-failovers 1 -switchovers 1 -kills 1 -stalls 1 $(WEBHOOK_FAULTS) -refunds 0.1 -last-items 3

.PHONY: chaos/ha/async/short
chaos/ha/async/short: bin/web bin/fakestripe bin/chaos ## chaos/ha/async in about a minute (part of make test)
	bin/chaos -web bin/web -ha -async -expect-loss -instances 2 -clients 16 -checkouts 300 -duration 25s -drain 8s -settle 30s \
		-failovers 1 -kills 1 $(WEBHOOK_FAULTS)

# The mutations (internal/checkout/mutation_*.go, docs/analysis.md): the
# shop's web binary built with one guarantee removed by a build tag, which
# only these binaries are built with, and a short run targeted at it that
# passes only when the history checker reports what the removal causes.
# nofence: the finish's fence (status started, this attempt's lock token)
# removed; an attempt paused before its finish (fault_pausefinish) writes
# after a retry took its key over and finished it. replayscope: the memory of finished answers looked up by key
# alone; a second customer sends a key the first used. storedbody: the
# answer stored is not the bytes sent; any replay differs.
MUTATIONS := nofence replayscope storedbody
MUTATION_WEBS := $(addprefix bin/web-mutation-,$(MUTATIONS))
.PHONY: $(MUTATION_WEBS)
$(MUTATION_WEBS): bin/web-mutation-%:
	@go build -tags "mutation_$* $(MUTATION_FAULT_$*)" -o $@ ./cmd/web

# nofence's run needs a pause between the provider's answer and the finish,
# which no fault from outside lands on reliably: fault_pausefinish builds
# it into the shop (internal/checkout/fault_pausefinish.go). The control,
# chaos/fault/pausefinish, is the same run on a shop with the pause and
# every guarantee: it must pass.
MUTATION_FAULT_nofence := fault_pausefinish
.PHONY: bin/web-fault-pausefinish chaos/fault/pausefinish
bin/web-fault-pausefinish:
	@go build -tags fault_pausefinish -o $@ ./cmd/web
NOFENCE_RUN = $(MUTATION_RUN) -checkouts 80 -duration 10s
chaos/fault/pausefinish: bin/web-fault-pausefinish bin/fakestripe bin/chaos ## the nofence mutation's run on a shop with its pause and every guarantee: passes
	rm -rf .data/fault/pausefinish && bin/chaos -dir .data/fault/pausefinish -web bin/web-fault-pausefinish $(NOFENCE_RUN)

MUTATION_RUN := -instances 2 -clients 8 -drain 5s -settle 20s -kills 0 -stalls 0 -provider-faults off -authentication -1
.PHONY: chaos/mutation/nofence chaos/mutation/replayscope chaos/mutation/storedbody chaos/mutations
chaos/mutation/nofence: bin/web-mutation-nofence bin/fakestripe bin/chaos
	rm -rf .data/mutation/nofence && bin/chaos -dir .data/mutation/nofence -web bin/web-mutation-nofence $(NOFENCE_RUN) \
		-expect-anomaly 'two different successes|stored answer differs|two orders'
chaos/mutation/replayscope: bin/web-mutation-replayscope bin/fakestripe bin/chaos
	rm -rf .data/mutation/replayscope && bin/chaos -dir .data/mutation/replayscope -web bin/web-mutation-replayscope $(MUTATION_RUN) -instances 1 -checkouts 40 -duration 8s -shared-keys 0.5 \
		-expect-anomaly "another customer's|acknowledged and later lost"
chaos/mutation/storedbody: bin/web-mutation-storedbody bin/fakestripe bin/chaos
	rm -rf .data/mutation/storedbody && bin/chaos -dir .data/mutation/storedbody -web bin/web-mutation-storedbody $(MUTATION_RUN) -checkouts 40 -duration 8s -shared-keys 0.2 \
		-expect-anomaly 'replay that differs|stored answer differs'
chaos/mutations: ## each mutation of the shop (a guarantee removed by a build tag) caught by the history checker, in short targeted runs (part of make test)
	$(MAKE) -s -j3 --output-sync=target $(addprefix chaos/mutation/,$(MUTATIONS))

# Skewed clocks (bench/chaos/skew.go, docs/analysis.md): each shop's wall
# clock off the database's by minutes, one drifting, to test that every
# lease is judged on the database's clock. libfaketime does not reach a Go
# binary (its LD_PRELOAD wraps libc; Go reads the clock through the vDSO),
# so bin/web-skew is the shop built with a copy of the toolchain whose
# runtime adds the skew the harness sets in each shop's environment
# (bench/chaos/skewclock). The harness reads each shop's clock from its
# Date header when it is ready and refuses the run unless it is off as
# asked, and reads it again at the end. Not part of test/chaos: River, the
# outbox's queue, judges stuck jobs and schedules retries on the shop's
# clock, so a run whose River leader is a fast shop fails on the outbox
# (docs/analysis.md#skewed-clocks); which shop leads, no flag chooses.
SKEW_GOROOT := .data/skewgo
.PHONY: bin/web-skew
bin/web-skew:
	@bench/chaos/skewclock/goroot.sh $(SKEW_GOROOT)
	@GOTOOLCHAIN=local $(SKEW_GOROOT)/bin/go build -o $@ ./cmd/web
CLOCK_SKEWS := -clock-skew '-5m,+3m,+90s/+30s'
.PHONY: chaos/skew/short
chaos/skew/short: bin/web-skew bin/fakestripe bin/chaos ## chaos/short with the shops' clocks 5 min behind, 3 min ahead, and 90 s ahead gaining 30 s a minute; kept in .data/skew/short
	rm -rf .data/skew/short && bin/chaos -dir .data/skew/short -web bin/web-skew $(CLOCK_SKEWS) -instances 3 -clients 16 -checkouts 250 -duration 30s -drain 8s -settle 30s -shared-keys 0.05 \
		-kills 2 -stalls 2 -db-crashes 1 -db-stalls 1 -row-locks 1 -smtp-stalls 1 -smtp-stall 5s $(WEBHOOK_FAULTS)

# The three short chaos runs at once: they mostly wait (on their drive's
# schedule, on River's rescuer), and each judges rates against its own
# run, so running side by side costs little time and no verdict. Each
# one's output is printed whole when it ends.
.PHONY: test/chaos
test/chaos: bin/web bin/fakestripe bin/chaos
	$(MAKE) -s -j3 --output-sync=target chaos/short chaos/ha/short chaos/ha/async/short
	$(MAKE) -s chaos/mutations

.PHONY: bench
bench: bin/testpg ## benchmarks (compare figures within one run only)
	$(TESTPG) go test -run '^$$' -bench . -benchmem -count 3 ./...

.PHONY: generate
# templ names each file from where it runs: the shop's views from the root
# (views/x.templ), each example from its own folder with the templ its
# go.mod pins (views.templ), as bench/cmd/examples regenerates it.
generate: ## regenerate sqlc and templ code (the shop's, the kit's own sqlc.yaml in idem/, the examples' templ)
	$(SQLC) generate
	$(SQLC) generate -f idem/sqlc.yaml
	for f in views/*.templ demo/lab/labviews/*.templ; do $(TEMPL) generate -f $$f -log-level error || exit 1; done
	for d in examples/*/; do if ls $$d*.templ >/dev/null 2>&1; then (cd $$d && GOWORK=off go tool templ generate -log-level error) || exit 1; fi; done

.PHONY: verify
verify: ## fail when generated code is not what the generators make from the sources
	@scripts/verify-generated

.PHONY: vet
vet: ## go vet and gofmt, of every module: the shop's, the kit's, the bench's, the fake's, the demo's and the examples'
	go vet ./...
	cd idem && go vet ./...
	for m in $(KIT_ADAPTERS); do (cd $$m && go vet ./...) || exit 1; done
	cd bench && go vet ./...
	for m in $(SIDE_MODULES); do (cd $$m && go vet ./...) || exit 1; done
	cd demo && go vet ./...
	for d in examples/*/; do (cd $$d && go vet ./...) || exit 1; done
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }

# golangci-lint with .golangci.yml (its linters, and why each is on, are
# there), pinned in a module of its own (tools/lint/go.mod) and built once
# into bin/; then go.mod and go.sum as go mod tidy leaves them, and the
# templ files as templ fmt leaves them (it formats them in place and fails,
# as make verify regenerates and fails). Each module on its own: the shop,
# the kit (idem/), the bench, the fake Stripe, the demo, each example; go
# mod tidy also on the tools modules.
GOLANGCI_LINT := $(CURDIR)/bin/golangci-lint

.PHONY: bin/golangci-lint
bin/golangci-lint:
	@go build -modfile=tools/lint/go.mod -o bin/golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint

.PHONY: vulncheck
vulncheck: ## govulncheck on every module (vuln.go.dev, or a database built from golang.org/x/vulndb when out of reach)
	scripts/vulncheck

.PHONY: lint
lint: bin/golangci-lint ## golangci-lint, go mod tidy -diff and templ fmt -fail, on every module: the shop's, the kit's, the bench's, the fake's, the demo's and the examples'
	$(GOLANGCI_LINT) run ./...
	cd idem && $(GOLANGCI_LINT) run ./...
	for m in $(KIT_ADAPTERS); do (cd $$m && $(GOLANGCI_LINT) run ./...) || exit 1; done
	cd bench && $(GOLANGCI_LINT) run ./...
	for m in $(SIDE_MODULES); do (cd $$m && $(GOLANGCI_LINT) run ./...) || exit 1; done
	cd demo && $(GOLANGCI_LINT) run ./...
	for d in examples/*/; do (cd $$d && $(GOLANGCI_LINT) run ./...) || exit 1; done
	for d in . bench demo $(SIDE_MODULES) tools tools/lint idem $(KIT_ADAPTERS) examples/*/; do (cd $$d && go mod tidy -diff) || { echo "go mod tidy: $$d needs it"; exit 1; }; done
	$(TEMPL) fmt -fail -log-level warn views demo/lab/labviews
	for d in examples/*/; do if ls $$d*.templ >/dev/null 2>&1; then (cd $$d && GOWORK=off go tool templ fmt -fail -log-level warn .) || exit 1; fi; done

.PHONY: deps
deps: ## install the system packages the tests need, when missing (as root)
	@scripts/install-deps

# The load test (bench/cmd/loadtest, bench/loadtest): its own throwaway
# PostgreSQL and shop, pgbench baselines and HTTP load side by side at one
# client count, a table of rates, ratios, latencies and CPU per request.
# The table and the web process's CPU profiles of its main legs are saved
# together in LOADTEST_OUT (a folder per run under .data/loadtest).
# Not part of make test. PGBOUNCER=1 puts PgBouncer (transaction pooling)
# in front of PostgreSQL. See docs/performance.md.
LOADTEST_CLIENTS ?= 16
LOADTEST_DURATION ?= 5s
LOADTEST_STAMP := $(shell date -u +%Y%m%dT%H%M%SZ)
LOADTEST_OUT ?= .data/loadtest/$(LOADTEST_STAMP)
.PHONY: loadtest
loadtest: bin/web bin/fakestripe bin/loadtest ## load test: pgbench baselines (the minimal pattern among them) vs the shop over HTTP, side by side; the table and CPU profiles in LOADTEST_OUT (PGBOUNCER=1 through PgBouncer)
	@mkdir -p $(LOADTEST_OUT)
	set -o pipefail; bin/loadtest -web bin/web -clients $(LOADTEST_CLIENTS) -duration $(LOADTEST_DURATION) \
		$(if $(PGBOUNCER),-pgbouncer) -profile $(if $(PROFILE),$(PROFILE),$(LOADTEST_OUT)) | tee $(LOADTEST_OUT)/table.txt
	@echo "loadtest: the table and the profiles are in $(LOADTEST_OUT)"

# The engine and API tests through PgBouncer 1.18 in transaction pooling
# (started by bench/cmd/withpgbouncer), the shop's pool in cache_describe mode;
# databases are created and migrated on a direct connection.
PGBOUNCER_PKGS := ./internal/checkout/ ./internal/api/ ./internal/handlers/ ./internal/lifecycle/ ./internal/app/
# The API's tests with the shop's pool in each query mode that sends its
# parameters as text typed from their Go types (DB_QUERY_MODE exec and
# simple_protocol, offered for PgBouncer): a []byte meant as JSON fails
# there (22P02) and nowhere else. The other modes are make test's own.
.PHONY: test/querymodes
test/querymodes: bin/testpg ## the API tests with the pool in the exec and simple_protocol query modes
	$(TESTPG) $(SHELL) -c 'for m in exec simple_protocol; do TEST_DB_QUERY_MODE=$$m go test -count=1 -timeout 10m ./internal/api/ || exit 1; done'

.PHONY: test/pgbouncer
test/pgbouncer: bin/withpgbouncer ## engine, API and kit tests through PgBouncer in transaction pooling
	@command -v pgbouncer >/dev/null || test -x /usr/sbin/pgbouncer || scripts/install-deps
	bin/withpgbouncer -- $(SHELL) -c 'go test -count=1 -timeout 10m $(PGBOUNCER_PKGS) && (cd bench && go test -count=1 -timeout 10m ./pgbouncer/) && cd idem && go test -count=1 -timeout 10m .'
