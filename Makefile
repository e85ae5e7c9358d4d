# rackform — build, test, lint. `make help` lists the targets.
SHELL   := bash
.SHELLFLAGS := -o pipefail -c
GO      ?= go
BIN     ?= bin/rackform
VERSION ?= 0.1.0-dev
LDFLAGS := -X github.com/rackform/rackform/internal/version.Version=$(VERSION)

.PHONY: help build test cross lint demo fuzz bench bench-fleet bench-rehearse bench-estimate bench-workers bench-scale generate clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/rackform
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/rackform

# RACKFORM_TEST_REPORT collects one line per test skipped for a missing
# component (internal/testenv), printed at the end; RACKFORM_TEST_REQUIRE
# (CI sets it) names components that must be there and must be used.
test: lint ## gofmt, vet and every test (the command CI runs); ends with the slowest tests and what skipped for a missing component
	@report=$$(mktemp -d); \
	$(GO) build -o $$report/testreport ./internal/testreport || exit 1; \
	RACKFORM_TEST_REPORT=$$report $(GO) test -count=1 -timeout 30m -json ./... | $$report/testreport; rc=$$?; \
	if [ -s $$report/skipped ]; then \
		echo; echo "Skipped for a missing component (install it to run these; README's Quick start):"; \
		sort -u $$report/skipped | sed 's/^/  /'; \
	fi; \
	for c in $$(echo "$$RACKFORM_TEST_REQUIRE" | tr , ' '); do \
		[ "$$c" = all ] && continue; \
		grep -qx "$$c" $$report/used 2>/dev/null || { echo "RACKFORM_TEST_REQUIRE names $$c, but no test used it"; rc=1; }; \
	done; \
	rm -rf $$report; exit $$rc

cross: ## compile every package for windows/amd64, darwin/arm64 and linux/arm64 (CI runs it after test)
	RACKFORM_CROSS=1 $(GO) test -count=1 -timeout 30m -run '^TestBuildsOnEveryPlatform$$' -v .

lint: ## gofmt check and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

demo: build ## sim → plan → apply (with a pause and continue) on the embedded nexus-lab example
	./$(BIN) demo

fuzz: ## run each fuzz target briefly (-fuzzminimizetime bounds minimizing a large failing input)
	$(GO) test ./config -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime 30s -fuzzminimizetime 5s
	$(GO) test ./config -run '^$$' -fuzz '^FuzzCatalogFile$$' -fuzztime 20s -fuzzminimizetime 5s
	$(GO) test ./config/version -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 20s -fuzzminimizetime 5s
	$(GO) test ./cmd/rackform/internal/command/views -run '^$$' -fuzz '^FuzzDiagnostics$$' -fuzztime 20s -fuzzminimizetime 5s
	$(GO) test ./planner/plan -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime 20s -fuzzminimizetime 5s
	$(GO) test ./executor -run '^$$' -fuzz '^FuzzJournalReplay$$' -fuzztime 20s -fuzzminimizetime 5s
	$(GO) test ./rehearsal -run '^$$' -fuzz '^FuzzParseScenario$$' -fuzztime 20s -fuzzminimizetime 5s
	$(GO) test ./providers/redfish -run '^$$' -fuzz '^FuzzParseTaskBody$$' -fuzztime 20s -fuzzminimizetime 5s
	$(GO) test ./providers/redfish -run '^$$' -fuzz '^FuzzParseInventory$$' -fuzztime 20s -fuzzminimizetime 5s
	$(GO) test ./providers/redfish -run '^$$' -fuzz '^FuzzParseRetryAfter$$' -fuzztime 20s -fuzzminimizetime 5s

bench: ## run the benchmarks
	$(GO) test -run '^$$' -bench . -benchmem ./...

N ?= 1000
REHEARSE_N ?= 10000
L ?= 200ms
M ?= 24
EXPAND ?= both
ROUNDS ?= 1
bench-fleet: ## fleet benchmark: rackform plan vs the floor against N sim BMCs (N=1000 L=200ms M=24 EXPAND=both|on|off ARGS=plan flags, BIN_BENCH=another binary, ROUNDS=3 for the median of three; APPLY=1 measures apply instead)
	RACKFORM_BENCH_FLEET=1 RACKFORM_BENCH_N=$(N) RACKFORM_BENCH_LATENCY=$(L) RACKFORM_BENCH_MEMBERS=$(M) RACKFORM_BENCH_EXPAND=$(EXPAND) RACKFORM_BENCH_ARGS='$(ARGS)' RACKFORM_BENCH_APPLY=$(APPLY) RACKFORM_BENCH_ROUNDS=$(ROUNDS) \
		RACKFORM_BENCH_BIN=$(BIN_BENCH) $(GO) test -count=1 -timeout 60m -run '^TestFleetBench$$' -v ./cmd/rackform

bench-rehearse: ## rehearsal benchmark: rackform rehearse of examples/fleet, examples/nexus-lab and a generated REHEARSE_N-server plan (REHEARSE_N=10000), wall time and the executor's overhead
	RACKFORM_BENCH_REHEARSE=1 RACKFORM_BENCH_N=$(REHEARSE_N) $(GO) test -count=1 -timeout 30m -run '^TestRehearseBench$$' -v ./cmd/rackform

# N=… on the command line sizes bench-workers too (its default is 20000).
WORKERS_N ?= $(if $(filter command line environment,$(origin N)),$(N),20000)
APPLIES ?= 4
PER_SIM ?= 5000
WORKERS_SPEED ?= 3000
WINDOW ?= 4m
LATE ?= 10s
KILL ?=
bench-workers: ## several workers on one run: N servers (N=20000) on `rackform sim -config` processes of PER_SIM BMCs (5000), applied by APPLIES `rackform apply` processes (4; the others -join LATE=10s after the first) on PostgreSQL at WORKERS_SPEED (3000); KILL=80s kills the last worker 80s after the canary window opens (WINDOW=4m after the start); flashes, steps twice, wall vs rehearsed and where it goes (the critical path against the rehearsal, CPU by process, PostgreSQL waits), statements and transactions per step
	RACKFORM_BENCH_WORKERS=1 RACKFORM_BENCH_N=$(WORKERS_N) RACKFORM_BENCH_APPLIES=$(APPLIES) RACKFORM_BENCH_PER_SIM=$(PER_SIM) RACKFORM_BENCH_SPEED=$(WORKERS_SPEED) RACKFORM_BENCH_WINDOW=$(WINDOW) RACKFORM_BENCH_LATE=$(LATE) RACKFORM_BENCH_KILL=$(KILL) \
		$(GO) test -count=1 -timeout 120m -run '^TestWorkersBench$$' -v ./cmd/rackform

SCALE_N ?= $(if $(filter command line environment,$(origin N)),$(N),10000)
SCALE_PER_SIM ?= 8000
bench-scale: ## a large fleet, what a user runs: plan of N servers (N=10000; 100000 works) in nexus-lab's shape against shard processes of SCALE_PER_SIM simulated HTTPS BMCs (8000; L=200ms, M=24, with expand) vs the floor in the same run (ROUNDS=3: plan and the floor three times in turn, the median ratio), then show (text, json, markdown, html), rehearse and status of it: wall, ratio, peak RSS of CLI+plugin, CPU, bytes per server
	RACKFORM_BENCH_SCALE=1 RACKFORM_BENCH_N=$(SCALE_N) RACKFORM_BENCH_PER_SIM=$(SCALE_PER_SIM) RACKFORM_BENCH_LATENCY=$(L) RACKFORM_BENCH_MEMBERS=$(M) RACKFORM_BENCH_ROUNDS=$(ROUNDS) \
		RACKFORM_BENCH_BIN=$(BIN_BENCH) $(GO) test -count=1 -timeout 120m -run '^TestScaleBench$$' -v ./cmd/rackform

RACKS ?= 4
PER_RACK ?= 10
SPEED ?= 100
JITTER ?= 0.2
ESTIMATE_ROUNDS ?= 2
SEED ?= 1
bench-estimate: ## estimates learned from history: apply a fleet on the simulator (jittered times), plan it again with that run's history, apply, report the estimate's error (RACKS=4 PER_RACK=10 SPEED=100 JITTER=0.2 ESTIMATE_ROUNDS=2 SEED=1)
	RACKFORM_BENCH_ESTIMATE=1 RACKFORM_BENCH_RACKS=$(RACKS) RACKFORM_BENCH_PER_RACK=$(PER_RACK) RACKFORM_BENCH_SPEED=$(SPEED) RACKFORM_BENCH_JITTER=$(JITTER) RACKFORM_BENCH_ROUNDS=$(ESTIMATE_ROUNDS) RACKFORM_BENCH_SEED=$(SEED) \
		RACKFORM_BENCH_BIN=$(BIN_BENCH) $(GO) test -count=1 -timeout 60m -run '^TestEstimateBench$$' -v ./cmd/rackform

generate: ## regenerate committed generated code (needs protoc)
	$(GO) generate ./...

clean:
	rm -rf bin
