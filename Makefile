# lockbench: `make bench` (the main job) and `make test`. Both install
# redis-server (and redis-sentinel, gcc, ZooKeeper with a JVM) with apt-get
# when missing and root, and build etcd from its Go module into bin/etcd.
GO      ?= go
BIN     := bin/lockbench
OUT     ?= lockbench-out/bench
PROFILE ?= ci
# The commit results.json records when Go's own VCS stamping is unavailable.
# ("-dirty": the work tree has uncommitted changes).
ETCD    := bin/etcd
COMMIT  ?= $(shell r=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null || r=$$r-dirty; echo $$r; } || echo unknown)

.PHONY: bench test seeds wait-seeds verdicts-sweep build deps deps-test vet clean perf docker-image etcd adapters mutants test-locktest-example test-locktest-parity

bench: deps build
	@echo "bench: lockbench bench --profile $(PROFILE) (ci: about 2 minutes 20 s on 2 cores; full: about 40 minutes), one line per run; report in $(OUT)/" >&2
	./$(BIN) bench --verbose --profile $(PROFILE) --out $(OUT)

# make perf: lockbench's own cost against redis-benchmark on one redis-server,
# recording on/off, and throughput vs clients 1..1024 (docs/performance.md).
PERF_OUT ?= lockbench-out/perf
perf: deps build
	./$(BIN) perf --sweep --out $(PERF_OUT)

# -p 1: one test package at a time. The fault tests time real restarts and
# pauses against TTLs of 50-200 ms; packages running side by side on 2 cores
# (docker, chromium, hundreds of redis-servers) slowed a restart from ~40 ms
# to ~370 ms and made canaries miss. On 2 cores it costs little wall time.
test: deps-test vet
	@echo "test: go test ./..., one package at a time (about 11 minutes on 2 cores; the first run also compiles every test binary, a minute or two more)" >&2
	GO=$(GO) ./scripts/gotest.sh -p 1 -count=1 -timeout 9m ./...
	cd adapters/redsync-v4.11 && GO=$(GO) ../../scripts/gotest.sh -count=1 ./... # a module of its own
	cd examples/locktest && GO=$(GO) ../../scripts/gotest.sh -count=1 -short ./... # locktest's example module: a team's lock in its own go test

# make test-locktest-example: go test -race of the example module
# (examples/locktest): the correct lock passes, the unchecked release fails
# with a witness and the reproduce command, and nothing (goroutine,
# process, temporary folder) is left after either. The race build takes
# minutes on 2 cores, so make test runs the example with -short instead.
test-locktest-example: deps-test
	LOCKTEST_EXAMPLE=1 GO=$(GO) ./scripts/gotest.sh -count=1 -timeout 30m -run 'TestExampleModule' ./locktest/

# make test-locktest-parity: every built-in strategy of the ci profile under
# every ci scenario it runs, through locktest.Run and through lockbench run
# with the same workload and seed: the same expectations and gated verdicts
# (about 5 minutes; make test runs 6 of these pairs).
test-locktest-parity: deps-test
	LOCKTEST_PARITY=all GO=$(GO) ./scripts/gotest.sh -count=1 -timeout 30m -run 'TestSameAnswerAsLockbenchRun' ./locktest/

# make seeds: the verdict matrix with 20 seeds for every pair (make test
# runs 5 for the named key results, 1 for the rest): about 40 minutes; then
# every etcd and ZooKeeper row once at TTL 5 s and 15 s
# (TestConsensusTimeScales): about an hour more.
seeds: deps-test
	LOCKBENCH_SEEDS=20 GO=$(GO) ./scripts/gotest.sh -count=1 -timeout 150m -run 'TestVerdictMatrix|TestConsensusTimeScales' ./bench/

# make wait-seeds: the verdict rows of token-lua-wait (a primary with
# replicas, WAIT 1) beside token-lua's failover rows, WAIT_SEEDS seeds
# each (default 3): not part of make test, whose one token-lua-wait run is
# TestTokenLuaWaitShort (a failover run lasts 2-12 s here): about 5
# minutes on 2 cores.
WAIT_SEEDS ?= 3
wait-seeds: deps-test
	LOCKBENCH_WAIT=$(WAIT_SEEDS) GO=$(GO) ./scripts/gotest.sh -count=1 -timeout 60m -run 'TestVerdictMatrix/^(token-lua-wait_|token-lua_(failover-lost-write|sentinel-failover)$$)' ./bench/

# make verdicts-sweep: every verdict row at three time scales (Redis TTL
# 100 ms, 1 s, 5 s; etcd and ZooKeeper 1 s, 5 s, 15 s), one seed a pass
# (SWEEP_SEED, default 1; run it again with SWEEP_SEED=2, 3 ... to add
# seeds), scenario by scenario into $(SWEEP_OUT)/seedN/SCENARIO (a scenario
# whose results.json is complete is kept: SWEEP_FRESH=1 measures it again),
# then the table in docs/verdicts.md from every pass in $(SWEEP_OUT)
# (scripts/verdictsweep; SWEEP_KEEP=1 keeps the table's rows these results
# do not measure). About 3-4 hours a pass on a busy 2-core machine;
# not part of make bench. Unexpected (exit 1) and inconclusive (4) runs are
# what the sweep looks for: it goes on; usage and environment errors stop it.
SWEEP_OUT ?= lockbench-out/verdicts-sweep
SWEEP_SEED ?= 1
SWEEP_SCENARIOS ?=
verdicts-sweep: deps build
	@echo "verdicts-sweep: lockbench bench --profile verdicts-sweep --seed $(SWEEP_SEED), one scenario at a time into $(SWEEP_OUT)/seed$(SWEEP_SEED)/ (hours on 2 cores), then the table in docs/verdicts.md" >&2
	@scs="$(SWEEP_SCENARIOS)"; [ -n "$$scs" ] || scs=$$(./$(BIN) list | awk '/^SCENARIO/{s=1;next} /^PROFILE/{s=0} s&&NF{print $$1}'); \
	for sc in $$scs; do \
		out=$(SWEEP_OUT)/seed$(SWEEP_SEED)/$$sc; \
		if [ -z "$(SWEEP_FRESH)" ] && [ -f $$out/results.json ] && ! grep -q '"incomplete"' $$out/results.json; then echo "verdicts-sweep: $$sc already measured in $$out (SWEEP_FRESH=1 measures it again)" >&2; continue; fi; \
		./$(BIN) bench --verbose --profile verdicts-sweep --seed $(SWEEP_SEED) --scenarios $$sc --out $$out; rc=$$?; \
		if [ $$rc -ne 0 ] && [ $$rc -ne 1 ] && [ $$rc -ne 4 ]; then echo "verdicts-sweep: $$sc stopped (exit $$rc)" >&2; exit $$rc; fi; \
	done
	$(GO) run ./scripts/verdictsweep $(if $(SWEEP_KEEP),-keep) -doc docs/verdicts.md $$(ls $(SWEEP_OUT)/*/*/results.json)

build:
	@test -x $(BIN) || echo "build: go build ./cmd/lockbench into $(BIN) (the first build downloads and compiles the modules: about a minute; later builds take seconds)" >&2
	$(GO) build -ldflags "-X github.com/lockbench/lockbench/bench.commitFromLinker=$(COMMIT)" -o $(BIN) ./cmd/lockbench

# The Go adapters of adapters/ (docs/protocol.md): one that serves any
# built-in strategy over the process protocol, and redsync v4.11.0 pinned
# in a module of its own. adapters/adapters.conf names them for exec:NAME.
adapters:
	$(GO) build -o bin/lockbench-adapter-go ./adapters/go
	cd adapters/redsync-v4.11 && $(GO) build -o ../../bin/lockbench-adapter-redsync-v4.11 .

# make mutants: the mutation zoo (docs/mutants.md). Builds the zoo's adapter
# into bin/lockbench-mutant, runs every mutant's killing cells and its
# unmutated twin's, seed by seed, and prints the mutation table, ending with
# "mutants: K of N killed". Exit 1 when a mutant that lockbench kills today
# survives. About 10 minutes on 2 cores.
MUTANTS_OUT ?= lockbench-out/mutants
mutants: deps build
	$(GO) build -o bin/lockbench-mutant ./mutants/testdata/adapter
	$(GO) run ./mutants/testdata/zoo --lockbench $(BIN) --adapter bin/lockbench-mutant --out $(MUTANTS_OUT)

deps: $(ETCD)
	@./scripts/deps.sh

# make test also needs chromium (the report test renders index.html headless).
deps-test: $(ETCD)
	@./scripts/deps.sh --browser

# etcd's server at the release tools/etcd/go.mod pins, built from its Go
# module (a module of its own, so its dependencies stay out of lockbench's):
# newer than Debian's etcd-server 3.4 and the same release as the client the
# etcd strategies link. Built once (1-2 min on a fresh machine, seconds with
# a warm build cache); rebuilt when tools/etcd changes.
etcd: $(ETCD)
$(ETCD): tools/etcd/go.mod tools/etcd/go.sum tools/etcd/main.go
	@echo "deps: building etcd $$(awk '$$1 == "go.etcd.io/etcd/server/v3" || $$2 == "go.etcd.io/etcd/server/v3" {print $$NF}' tools/etcd/go.mod) from its Go module into $(ETCD) (once; 1-2 min on a fresh machine)" >&2
	@start=$$(date +%s); cd tools/etcd && $(GO) build -o ../../$(ETCD) . && echo "deps: built $(ETCD) in $$(( $$(date +%s) - start )) s" >&2

vet:
	@echo "vet: gofmt and go vet (the first run compiles the packages: about a minute)" >&2
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	$(GO) vet ./...
	$(GO) vet ./mutants/testdata/adapter ./mutants/testdata/zoo # testdata: outside ./...
	cd adapters/redsync-v4.11 && $(GO) vet ./...

# The docker backend's local image (no registry needed): FROM scratch with
# this machine's redis-server and the libraries ldd lists for it.
docker-image:
	$(GO) run ./scripts/dockerimage -tag lockbench/redis:local

clean:
	rm -rf bin lockbench-out
