# rackform — build, test, lint. `make help` lists the targets.
GO      ?= go
BIN     ?= bin/rackform
VERSION ?= 0.1.0-dev
LDFLAGS := -X github.com/rackform/rackform/internal/version.Version=$(VERSION)

.PHONY: help build test lint demo fuzz bench bench-fleet generate clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/rackform
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/rackform

test: lint ## gofmt, vet and every test (the command CI runs)
	$(GO) test -count=1 ./...

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
	$(GO) test ./providers/redfish -run '^$$' -fuzz '^FuzzParseTaskBody$$' -fuzztime 20s -fuzzminimizetime 5s
	$(GO) test ./providers/redfish -run '^$$' -fuzz '^FuzzParseInventory$$' -fuzztime 20s -fuzzminimizetime 5s
	$(GO) test ./providers/redfish -run '^$$' -fuzz '^FuzzParseRetryAfter$$' -fuzztime 20s -fuzzminimizetime 5s

bench: ## run the benchmarks
	$(GO) test -run '^$$' -bench . -benchmem ./...

N ?= 1000
L ?= 200ms
M ?= 24
EXPAND ?= both
ROUNDS ?= 1
bench-fleet: ## fleet benchmark: rackform plan vs the floor against N sim BMCs (N=1000 L=200ms M=24 EXPAND=both|on|off ARGS=plan flags, BIN_BENCH=another binary, ROUNDS=3 for the median of three; APPLY=1 measures apply instead)
	RACKFORM_BENCH_FLEET=1 RACKFORM_BENCH_N=$(N) RACKFORM_BENCH_LATENCY=$(L) RACKFORM_BENCH_MEMBERS=$(M) RACKFORM_BENCH_EXPAND=$(EXPAND) RACKFORM_BENCH_ARGS='$(ARGS)' RACKFORM_BENCH_APPLY=$(APPLY) RACKFORM_BENCH_ROUNDS=$(ROUNDS) \
		RACKFORM_BENCH_BIN=$(BIN_BENCH) $(GO) test -count=1 -timeout 60m -run '^TestFleetBench$$' -v ./cmd/rackform

generate: ## regenerate committed generated code (needs protoc)
	$(GO) generate ./...

clean:
	rm -rf bin
