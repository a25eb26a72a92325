# Run `make` or `make help` for the list of targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

SQLC  := go tool -modfile=tools/go.mod sqlc
TEMPL := go tool templ

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z\/-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## serve on http://127.0.0.1:8080 (local PostgreSQL unless DATABASE_URL is set), metrics and pprof on 127.0.0.1:9090
	@mkdir -p .data && test -s .data/session-secret || (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > .data/session-secret)
	LOCAL_DB="$(CURDIR)/.data/postgres" DEMO="$${DEMO:-1}" ADMIN_ADDR="$${ADMIN_ADDR-127.0.0.1:9090}" \
		SESSION_SECRET="$${SESSION_SECRET:-$$(cat .data/session-secret)}" go run ./cmd/web

.PHONY: idemcheck
idemcheck: ## check the running shop's idempotency keys (start it with make run first)
	go run ./cmd/idemcheck -base http://127.0.0.1:8080 -profile shop

.PHONY: test
test: deps verify vet ## everything CI checks: generated code, vet, all tests (-race), browser tests
	go test -race -count=1 -timeout 20m $$(go list ./... | grep -v /internal/browsertest)
	$(MAKE) -s fuzz FUZZTIME=3s
	$(MAKE) -s chaos/short
	$(MAKE) -s test/browser

# The browser tests run on their own, after the rest and without -race: the
# server code they drive is raced by the handler tests, and Chromium needs
# the CPU. They are retried once, because on a loaded 2-core machine
# chromedp now and then loses a page's execution context after a navigation
# and a wait times out; a second failure fails the build.
.PHONY: test/browser
test/browser: ## headless-Chromium tests of the checkout and the lab
	go test -count=1 -timeout 15m ./internal/browsertest/ || { echo "browser tests failed; retrying once"; go test -count=1 -timeout 15m ./internal/browsertest/; }

.PHONY: test/short
test/short: ## the tests without -race, for a quick loop
	go test -count=1 ./...

# Every Fuzz target of the module, found per package with `go test -list`,
# so targets added anywhere are picked up. Only packages whose test files
# declare one are listed, to skip building the others' tests.
FUZZTIME ?= 1m
.PHONY: fuzz
fuzz: ## run every Fuzz* target in the module for FUZZTIME each (default 1m; make test uses 3s)
	@set -e; for dir in $$(git ls-files --cached --others --exclude-standard '*_test.go' | xargs grep -l '^func Fuzz' | xargs -r -n1 dirname | sort -u); do \
		for target in $$(go test -list '^Fuzz' ./$$dir | grep '^Fuzz'); do \
			echo "fuzz ./$$dir $$target ($(FUZZTIME))"; \
			go test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) ./$$dir; \
		done; \
	done

# The chaos harness (cmd/chaos, internal/chaos): shops, provider and
# PostgreSQL as separate processes, killed, paused and crashed while clients
# check out; exits non-zero when an invariant broke. See
# docs/failure-model.md.
.PHONY: chaos
chaos: ## chaos harness, long: 10,000 checkouts under kills, stalls, DB crashes, provider faults
	go build -o bin/web ./cmd/web
	go run ./cmd/chaos -v -web bin/web -instances 3 -clients 48 -checkouts 10000 -duration 8m -drain 1m \
		-kills 24 -stalls 16 -db-crashes 6

.PHONY: chaos/short
chaos/short: ## chaos harness in under a minute (part of make test)
	go build -o bin/web ./cmd/web
	go run ./cmd/chaos -web bin/web -instances 3 -clients 16 -checkouts 250 -duration 20s -drain 8s -settle 15s \
		-kills 2 -stalls 2 -db-crashes 1

.PHONY: bench
bench: ## benchmarks (compare figures within one run only)
	go test -run '^$$' -bench . -benchmem -count 3 ./...

.PHONY: generate
generate: ## regenerate sqlc and templ code
	$(SQLC) generate
	$(TEMPL) generate -log-level error

.PHONY: verify
verify: ## fail when generated code is not what the generators make from the sources
	@scripts/verify-generated

.PHONY: vet
vet: ## go vet and gofmt
	go vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }

.PHONY: deps
deps: ## install the system packages the tests need, when missing (as root)
	@scripts/install-deps
